/**
 * What of a request URL may be written to the log.
 *
 * Owns: the rule that keeps secrets out of request log lines wherever a client
 * puts them. A query parameter's value is logged only when the route declares
 * that parameter (`page`, `per_page`, ...; none of them a secret); any other
 * value, on any path, is `[redacted]`, since clients coming from other gateways
 * put keys in `?token=`, `?apikey=` and the like. Anything shaped like a token
 * or webhook secret (`mgw_...`, `whsec_...`) is redacted wherever it appears.
 * Headers are never logged at all (see the request serializer in app.ts).
 * Must never: cost more than a pass over the URL, which the header limit bounds.
 */
import type { FastifyRequest } from 'fastify';

export const REDACTED = '[redacted]';

/** The shapes of the gateway's own secrets: API tokens (base64url) and webhook signing secrets (base64). */
const SECRET_SHAPE = /mgw_[A-Za-z0-9_%-]*|whsec_[A-Za-z0-9+/=%]*/gi;

/** Query parameter names declared by a route's querystring schema, by schema. */
const declaredByQuerySchema = new WeakMap<object, ReadonlySet<string>>();
const NONE: ReadonlySet<string> = new Set();

function declaredNames(schema: unknown): ReadonlySet<string> {
  if (typeof schema !== 'object' || schema === null) return NONE;
  let names = declaredByQuerySchema.get(schema);
  if (names === undefined) {
    const properties = (schema as { properties?: Record<string, unknown> }).properties;
    names = new Set(properties === undefined ? [] : Object.keys(properties));
    declaredByQuerySchema.set(schema, names);
  }
  return names;
}

function decoded(text: string): string {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    return text;
  }
}

/**
 * The URL as it may be logged: query values the route does not declare
 * replaced by `[redacted]`, and anything shaped like a secret as well.
 */
export function urlForLog(url: string, declared: ReadonlySet<string> = NONE): string {
  const mark = url.indexOf('?');
  let safe = url;
  if (mark !== -1) {
    const pairs = url.slice(mark + 1).split('&');
    for (let i = 0; i < pairs.length; i++) {
      const pair = pairs[i] ?? '';
      const equals = pair.indexOf('=');
      if (equals === -1) continue;
      if (!declared.has(decoded(pair.slice(0, equals)))) pairs[i] = `${pair.slice(0, equals)}=${REDACTED}`;
    }
    safe = `${url.slice(0, mark)}?${pairs.join('&')}`;
  }
  return safe.replace(SECRET_SHAPE, REDACTED);
}

/** The request's URL as it may be logged. */
export function requestUrlForLog(request: FastifyRequest): string {
  const url = request.url;
  if (url.indexOf('?') === -1 && url.indexOf('_') === -1) return url;
  return urlForLog(url, declaredNames(request.routeOptions.schema?.querystring));
}
