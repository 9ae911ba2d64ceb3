/**
 * The OpenAPI 3.1 document (`GET /openapi.json`) and the interactive docs
 * (`GET /docs`), generated from the same schemas that validate requests.
 *
 * Owns: document metadata and which routes appear in it (each route once, at
 * its spec path; the other alias, with or without `/api`, is hidden), and how
 * a route's schema reads in the document (a query parameter with a default is
 * optional to a client, whatever the validation schema's `required` says;
 * a body may be sent as JSON or as a form, docs/internals.md, Whatspie compatibility).
 */
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { isOptionalBody } from './validation.js';

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
    transform: ({ schema, url }) => ({ schema: withOptionalBody(withFormBodies(withOptionalDefaults(schema))), url }),
    transformObject: (document) =>
      optionalBodiesNotRequired((document as { openapiObject: JsonObject }).openapiObject) as never,
  });
  await app.register(swaggerUi, { routePrefix: '/docs', uiConfig: { docExpansion: 'list', deepLinking: true } });
  // Every route is also served under /api (docs/internals.md, Answers and errors), the document included.
  for (const path of ['/openapi.json', '/api/openapi.json']) {
    app.get(path, { schema: { hide: true }, config: { public: true } }, async () => app.swagger());
  }
}

type JsonObject = Record<string, unknown>;

/** The content types every body is taken in (src/http/forms.ts), JSON first: the one /docs sends. */
export const BODY_CONTENT_TYPES = ['application/json', 'application/x-www-form-urlencoded', 'multipart/form-data'];

/**
 * The route schema with its body shown under each content type it is taken in. A form's fields
 * carry the same names, nested as in PHP (`params[image][url]`).
 */
export function withFormBodies<T>(schema: T): T {
  const route = schema as { body?: unknown; consumes?: unknown } | undefined;
  if (route?.body === undefined || route.consumes !== undefined) return schema;
  return { ...route, consumes: BODY_CONTENT_TYPES } as T;
}

/** Marks an operation whose body may be left out (`Type.Optional`, e.g. NoFieldsBody), for the pass below. */
const OPTIONAL_BODY = 'x-optional-body';

export function withOptionalBody<T>(schema: T): T {
  const body = (schema as { body?: unknown } | undefined)?.body;
  if (!isOptionalBody(body)) return schema;
  return { ...schema, [OPTIONAL_BODY]: true } as T;
}

/**
 * The document with `requestBody.required: false` where the body may be left out: @fastify/swagger
 * marks every declared body required, which would tell generated clients they must send one.
 */
export function optionalBodiesNotRequired(document: JsonObject): JsonObject {
  for (const operations of Object.values((document.paths ?? {}) as Record<string, Record<string, JsonObject>>)) {
    for (const operation of Object.values(operations)) {
      if (operation[OPTIONAL_BODY] !== true) continue;
      delete operation[OPTIONAL_BODY];
      const requestBody = operation.requestBody as JsonObject | undefined;
      if (requestBody !== undefined) requestBody.required = false;
    }
  }
  return document;
}

/**
 * The route schema as the document shows it: query parameters that have a
 * default are not required. The validation schema lists them as required
 * (the handler always sees a value, the default filled in), which the
 * document would otherwise present as "the client must send it".
 */
export function withOptionalDefaults<T>(schema: T): T {
  const querystring = (schema as { querystring?: JsonObject } | undefined)?.querystring;
  const required = querystring?.required;
  const properties = querystring?.properties as Record<string, JsonObject> | undefined;
  if (!Array.isArray(required) || properties === undefined) return schema;
  const stillRequired = required.filter((name) => properties[String(name)]?.default === undefined);
  if (stillRequired.length === required.length) return schema;
  return { ...schema, querystring: { ...querystring, required: stillRequired } };
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
