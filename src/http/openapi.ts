/**
 * The OpenAPI 3.1 document (`GET /openapi.json`) and the interactive docs
 * (`GET /docs`), generated from the same schemas that validate requests.
 *
 * Owns: document metadata and which routes appear in it (each route once, at
 * its spec path; the other alias, with or without `/api`, is hidden).
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

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * The prefix of the path the contract names for this route: `''` (the
     * default) or `'/api'` (spec 4.7's members add). Every route is served
     * under both; only the canonical one appears in the OpenAPI document.
     */
    canonicalPrefix?: '' | '/api';
  }
}

/** Whether a route registered under `prefix` is the alias to leave out of the document. */
export function isHiddenAlias(
  prefix: string | undefined,
  config: { canonicalPrefix?: '' | '/api' } | undefined,
): boolean {
  const canonical = config?.canonicalPrefix ?? '';
  const registered = prefix ?? '';
  return (registered === '' || registered === '/api') && registered !== canonical;
}
