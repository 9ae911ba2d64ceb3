/**
 * The OpenAPI 3.1 document (`GET /openapi.json`) and the interactive docs
 * (`GET /docs`), generated from the same schemas that validate requests.
 *
 * Owns: document metadata and which routes appear in it (each route once, at
 * its spec path; the `/api` aliases are hidden).
 */
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';

export async function installOpenApi(app: FastifyInstance, description: string): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Messaging Gateway API',
        version: '0.1.0',
        description,
      },
      components: {
        securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'API token (mgw_...)' } },
      },
      security: [{ bearer: [] }],
    },
  });
  await app.register(swaggerUi, { routePrefix: '/docs', uiConfig: { docExpansion: 'list', deepLinking: true } });
  app.get('/openapi.json', { schema: { hide: true }, config: { public: true } }, async () => app.swagger());
}
