/**
 * Renders every failure in the contract's envelope (docs/internals.md, Answers and errors): API errors,
 * schema validation, framework errors (bad JSON, content type, body size),
 * unknown routes and wrong methods. A client that hung up before its request was
 * read is not a failure: it is noted at debug level and not answered.
 *
 * Owns: the mapping from any thrown thing to `{code, message, error?, errors?}`.
 * Must never: leak a stack, SQL text or internal path; a 5xx says only
 * "Internal server error" (logged in full, answered in brief).
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import FindMyWay, { type HTTPMethod, type HTTPVersion } from 'find-my-way';
import { STORE_RETRY_AFTER_S, storeFault } from '../store/faults.js';
import { ApiError, errorBody, type ErrorCode } from '../errors.js';
import { requestUrlForLog } from './log-redaction.js';
import { GROUP_REF_PATTERN, GROUP_REF_RULE, NOT_BLANK, PHONE_PATTERN, PHONE_RULE, typeWords } from './schemas.js';
import { DeviceUnavailableError, LeaseLostError } from '../cluster/holdings.js';

/** Seconds a client waits before asking again for a device no node holds right now. */
export const DEVICE_RETRY_AFTER_S = 5;

/** The answer when no live node can act for a device right now (never a hang). */
export function deviceUnavailable(): ApiError {
  return new ApiError('DEVICE_UNAVAILABLE', { headers: { 'retry-after': String(DEVICE_RETRY_AFTER_S) } });
}

interface SchemaIssue {
  instancePath: string;
  keyword: string;
  message?: string;
  params: Record<string, unknown>;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * Field paths (dotted, e.g. `package`) whose schema failures answer with a
     * specific error instead of `Validation failed`; a missing required field
     * still answers `Validation failed`.
     */
    fieldErrors?: Record<string, ErrorCode>;
  }
}

function fieldPath(issue: SchemaIssue): string {
  const parts = issue.instancePath.split('/').filter((part) => part !== '');
  if (issue.keyword === 'required' && typeof issue.params.missingProperty === 'string') {
    parts.push(issue.params.missingProperty);
  }
  if (issue.keyword === 'additionalProperties' && typeof issue.params.additionalProperty === 'string') {
    parts.push(issue.params.additionalProperty);
  }
  return parts.map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~')).join('.');
}

/** Words for a pattern a client cannot be expected to read as a regular expression. */
const PATTERN_RULES: Record<string, string> = {
  [PHONE_PATTERN.source]: PHONE_RULE,
  [GROUP_REF_PATTERN.source]: GROUP_REF_RULE,
};

const plural = (count: number, noun: string) => `${count} ${noun}${count === 1 ? '' : 's'}`;

/** What a client reads for one schema issue: the words of the message route, never a regex. */
function issueMessage(issue: SchemaIssue): string {
  const limit = issue.params.limit;
  switch (issue.keyword) {
    case 'required':
      return 'is required';
    // Only bodies that refuse other fields say so (PATCH /devices/{id}: package, status, phone...).
    case 'additionalProperties':
      return 'cannot be set by this request';
    case 'type': {
      // A check of our own that reports as `type` words itself (whole numbers in decimal digits).
      if (issue.message !== undefined && issue.message !== `must be ${String(issue.params.type)}`) {
        return issue.message;
      }
      const types = String(issue.params.type)
        .split(',')
        .filter((type) => type !== 'null');
      return `must be ${types.map(typeWords).join(' or ')}`;
    }
    case 'pattern':
      if (issue.params.pattern === NOT_BLANK) return 'must not be blank';
      return PATTERN_RULES[String(issue.params.pattern)] ?? 'has an invalid format';
    case 'minLength':
      return limit === 1 ? 'must not be empty' : `must be at least ${plural(Number(limit), 'character')}`;
    case 'maxLength':
      return `must be at most ${plural(Number(limit), 'character')}`;
    case 'minItems':
      return `must have at least ${plural(Number(limit), 'item')}`;
    case 'maxItems':
      return `must have at most ${plural(Number(limit), 'item')}`;
    case 'minimum':
      return `must be at least ${String(limit)}`;
    case 'maximum':
      return `must be at most ${String(limit)}`;
    case 'enum':
      return `must be one of: ${(issue.params.allowedValues as unknown[]).map(String).join(', ')}`;
    case 'format':
      return issue.params.format === 'uri'
        ? 'must be an absolute URL'
        : `must be a valid ${String(issue.params.format)}`;
    default:
      return issue.message ?? 'is invalid';
  }
}

/**
 * The issues worth reporting: a nullable field (`anyOf [value, null]`) that fails reports why the
 * value is wrong, not also "must be null" and "must match a schema in anyOf".
 */
function meaningful(issues: readonly SchemaIssue[]): SchemaIssue[] {
  const nullBranch = (issue: SchemaIssue) => issue.keyword === 'type' && issue.params.type === 'null';
  return issues.filter((issue) => issue.keyword !== 'anyOf' && !nullBranch(issue));
}

/** At most this many field paths are reported, so a huge malformed body cannot make a huge answer. */
const MAX_REPORTED_PATHS = 100;

export function validationError(
  issues: readonly SchemaIssue[],
  context: string,
  fieldErrors: Record<string, ErrorCode> | undefined,
): ApiError {
  const errors: Record<string, string[]> = {};
  let specific: ErrorCode | undefined;
  let paths = 0;
  for (const issue of meaningful(issues)) {
    const path = fieldPath(issue) || context;
    const message = issueMessage(issue);
    const messages = Object.hasOwn(errors, path) ? errors[path] : undefined;
    if (messages === undefined) {
      if (paths >= MAX_REPORTED_PATHS) continue;
      paths++;
      errors[path] = [message];
    } else if (!messages.includes(message)) {
      messages.push(message);
    }
    // A field that is missing, or that may not be sent at all, is not a bad value of it.
    const aboutValue = issue.keyword !== 'required' && issue.keyword !== 'additionalProperties';
    if (fieldErrors !== undefined && aboutValue && specific === undefined) {
      const match = Object.keys(fieldErrors).find((field) => path === field || path.startsWith(`${field}.`));
      if (match !== undefined) specific = fieldErrors[match];
    }
  }
  return new ApiError(specific ?? 'VALIDATION_FAILED', { errors });
}

const FRAMEWORK_CODES: Record<string, ErrorCode> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'UNSUPPORTED_MEDIA_TYPE',
  FST_ERR_CTP_BODY_TOO_LARGE: 'PAYLOAD_TOO_LARGE',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'INVALID_JSON',
  FST_ERR_CTP_INVALID_JSON_BODY: 'INVALID_JSON',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'BAD_REQUEST',
};

export function toApiError(error: unknown, request: FastifyRequest): ApiError {
  if (error instanceof ApiError) return error;
  const fastifyError = error as Partial<FastifyError> & { validation?: SchemaIssue[]; validationContext?: string };
  if (Array.isArray(fastifyError.validation)) {
    return validationError(
      fastifyError.validation,
      fastifyError.validationContext ?? 'body',
      request.routeOptions.config.fieldErrors,
    );
  }
  // The device's holder is down, or it moved to another node mid-request: a retry finds its new holder.
  if (error instanceof DeviceUnavailableError || error instanceof LeaseLostError) return deviceUnavailable();
  // The store out of service (down, frozen, full disk): a client should come back later, not report a bug.
  if (storeFault(error) !== null) {
    return new ApiError('STORE_UNAVAILABLE', { headers: { 'retry-after': String(STORE_RETRY_AFTER_S) } });
  }
  const mapped = fastifyError.code === undefined ? undefined : FRAMEWORK_CODES[fastifyError.code];
  if (mapped !== undefined) return new ApiError(mapped);
  if (error instanceof SyntaxError && fastifyError.statusCode === 400) return new ApiError('INVALID_JSON');
  const status = fastifyError.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    if (status === 413) return new ApiError('PAYLOAD_TOO_LARGE');
    if (status === 415) return new ApiError('UNSUPPORTED_MEDIA_TYPE');
    return new ApiError('BAD_REQUEST');
  }
  return new ApiError('INTERNAL');
}

/**
 * True when the error is the client's connection ending while its request body was still being read:
 * Node fails the request stream with `aborted` (code ECONNRESET, the same code a lost database
 * connection has), so it is recognised by being the request stream's own error, not by its code.
 */
export function clientWentAway(error: unknown, request: FastifyRequest): boolean {
  const raw = request.raw;
  if (raw.errored !== null && raw.errored === error) return true;
  const code = (error as { code?: unknown } | null)?.code;
  return raw.aborted && (code === 'ECONNRESET' || code === 'ECONNABORTED');
}

export function sendError(reply: FastifyReply, error: ApiError): FastifyReply {
  if (error.detail.headers !== undefined) reply.headers(error.detail.headers);
  // RFC 9110: a 401 names the scheme that would be accepted.
  if (error.statusCode === 401) reply.header('www-authenticate', 'Bearer');
  return reply.code(error.statusCode).type('application/json; charset=utf-8').send(errorBody(error));
}

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

/** Installs the error handler, the not-found handler and 405 detection. */
export function installErrorHandling(app: FastifyInstance): void {
  // A second router holding every route, so an unknown method on a known path answers 405, not 404.
  const known = FindMyWay<HTTPVersion.V1>();
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    for (const raw of methods) {
      const method = raw.toUpperCase() as HTTPMethod;
      if (method === 'HEAD' || method === 'OPTIONS') continue;
      if (known.hasRoute(method, route.url)) continue;
      known.on(method, route.url, () => undefined);
    }
  });

  app.setErrorHandler((error, request, reply) => {
    if (clientWentAway(error, request)) {
      // Nobody is left to answer, and nothing of ours failed: one debug line, no answer, no 5xx counted.
      request.log.debug(
        { method: request.method, url: requestUrlForLog(request) },
        'client closed the connection before its request was read',
      );
      reply.hijack();
      request.raw.socket?.destroy();
      return;
    }
    const apiError = toApiError(error, request);
    if (apiError.code === 'STORE_UNAVAILABLE') {
      request.log.error({ err: error, fault: storeFault(error)?.code }, 'request failed: the store is out of service');
    } else if (apiError.statusCode >= 500) {
      request.log.error({ err: error }, 'request failed');
    }
    return sendError(reply, apiError);
  });

  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0] ?? '/';
    const allowed = METHODS.filter((method) => method !== request.method && known.find(method, path) !== null);
    if (allowed.length > 0) {
      return sendError(reply, new ApiError('METHOD_NOT_ALLOWED', { headers: { allow: allowed.join(', ') } }));
    }
    return sendError(reply, new ApiError('NOT_FOUND'));
  });
}
