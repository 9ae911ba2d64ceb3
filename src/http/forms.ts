/**
 * Form bodies (docs/internals.md, Whatspie compatibility): `application/x-www-form-urlencoded` and
 * `multipart/form-data` on every route that takes a body, as the hosted
 * service's older clients send them (`receiver=…&message=…&type=chat`, PHP's
 * `CURLOPT_POSTFIELDS` with an array). Field names nest as in PHP, through
 * `qs`: `params[text]`, `params[image][url]`, `participants[]`, `a[0][b]`; a
 * name given twice makes a list. The body then becomes the JSON value the
 * route's schema describes (src/forms.ts reads numbers and booleans), marked
 * as a form body, and is validated like a JSON body from there on.
 *
 * Limits, each refused with 400 `Validation failed` naming it (never parsed
 * past it): the body size (the same limit as JSON, 413), nesting (the JSON
 * depth limit), FORM_FIELD_LIMIT fields (FORM_PART_LIMIT multipart parts),
 * FORM_BRACKET_LIMIT brackets in all names, lists of FORM_LIST_LIMIT items
 * (so `a[99999999]=x` is refused, not allocated), field names `__proto__`,
 * `constructor` and `prototype`. Within them a form costs about what a JSON
 * body of its size does (bench/form-bodies.ts). A multipart file part is refused as soon as
 * its headers arrive: media are given by URL, and no file is read or kept.
 *
 * Owns: the two content-type parsers and their limits.
 * Must never: buffer a multipart body beyond the body limit, read a file part,
 * or let a field name reach an object's prototype.
 */
import { Busboy } from '@fastify/busboy';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import qs from 'qs';
import { ApiError } from '../errors.js';
import { formValueAs, markFormBody } from '../forms.js';
import { MAX_JSON_DEPTH } from './json-depth.js';
import { isValidatedByHandler } from './validation.js';

/** Fields one form body may have: the largest list a route takes (1023 participants), twice over. */
export const FORM_FIELD_LIMIT = 2048;
/** Items one list may have, and one past the highest index `a[N]` may name. */
export const FORM_LIST_LIMIT = 1024;
/**
 * `[` in all field names of a body together. Each opens an object or list, and building those is
 * most of a parse's work: 2,048 names 31 levels deep would make 63,000 of them. A list message of
 * 100 rows, the most nested body a route takes, needs about 1,500.
 */
export const FORM_BRACKET_LIMIT = 4096;
/** Parts one multipart body may have: each costs far more to parse than a urlencoded field. */
export const FORM_PART_LIMIT = 256;
/** A refused file part is named in the answer by its field name when the name is at most this long. */
const NAMED_FIELD_MAX = 100;

const refusal = (problem: string, field = 'body') =>
  new ApiError('VALIDATION_FAILED', { errors: { [field]: [problem] } });

const DEPTH_PROBLEM = `must not nest objects and arrays more than ${MAX_JSON_DEPTH} levels deep`;
const FIELDS_PROBLEM = `must have at most ${FORM_FIELD_LIMIT} fields`;
const LIST_PROBLEM = `must not have a list of more than ${FORM_LIST_LIMIT} items, nor an index above ${FORM_LIST_LIMIT - 1}`;
const NAME_PROBLEM = 'field names must not use __proto__, constructor or prototype';
const BRACKETS_PROBLEM = `field names must have at most ${FORM_BRACKET_LIMIT} brackets in all`;
const PARTS_PROBLEM = `must have at most ${FORM_PART_LIMIT} parts`;

/** A name refused while qs reads it, with the problem to answer. */
class RefusedName extends Error {}

const FORBIDDEN = new Set(['__proto__', 'constructor', 'prototype']);
// A name's root, then each `[...]` group, as qs reads them.
const SEGMENT = /^[^[]*|\[[^\]]*\]?/g;

/** Checks each name as qs decodes it; throws RefusedName for a forbidden name or past the bracket budget. */
function nameChecker(): (name: string) => void {
  let brackets = 0;
  return (name) => {
    for (const match of name.matchAll(SEGMENT)) {
      const segment = match[0].startsWith('[') ? match[0].slice(1).replace(/\]$/, '') : match[0];
      if (FORBIDDEN.has(segment)) throw new RefusedName(NAME_PROBLEM);
    }
    for (let i = name.indexOf('['); i !== -1; i = name.indexOf('[', i + 1)) {
      if (++brackets > FORM_BRACKET_LIMIT) throw new RefusedName(BRACKETS_PROBLEM);
    }
  };
}

/** The fields of a urlencoded text, nested as in PHP; throws the ApiError of the first limit crossed. */
export function parseFormFields(text: string): Record<string, unknown> {
  const checkName = nameChecker();
  try {
    return qs.parse(text, {
      // qs counts the brackets after the root; JSON's depth counts the body itself as a level.
      depth: MAX_JSON_DEPTH - 1,
      strictDepth: true,
      parameterLimit: FORM_FIELD_LIMIT,
      arrayLimit: FORM_LIST_LIMIT,
      throwOnLimitExceeded: true,
      duplicates: 'combine',
      // Names are data (a JSON body may have `toString` too); the three that reach prototypes are refused above.
      allowPrototypes: true,
      decoder: (value, decode, charset, kind) => {
        const decoded = decode(value, decode, charset) as string;
        if (kind === 'key') checkName(decoded);
        return decoded;
      },
    }) as Record<string, unknown>;
  } catch (error) {
    if (error instanceof RefusedName) throw refusal(error.message);
    if (error instanceof RangeError) {
      // qs says which limit in its message; each limit is tested, so a change of wording shows.
      if (/depth/i.test(error.message)) throw refusal(DEPTH_PROBLEM);
      if (/parameter/i.test(error.message)) throw refusal(FIELDS_PROBLEM);
      if (/array/i.test(error.message)) throw refusal(LIST_PROBLEM);
    }
    throw error;
  }
}

/** The fields as the route's body: its schema reads the texts (unless its handler validates), then marked. */
function asRouteBody(request: FastifyRequest, fields: Record<string, unknown>): Record<string, unknown> {
  const schema = request.routeOptions.schema?.body;
  const body =
    schema === undefined || isValidatedByHandler(schema)
      ? fields
      : (formValueAs(schema, fields) as Record<string, unknown>);
  markFormBody(body);
  return body;
}

const percent = (text: string) => encodeURIComponent(text);

/**
 * Reads a multipart body as a stream: text fields are collected (bounded by the body limit), and
 * the first file part, too many parts or a malformed body ends the parse with its refusal; what is
 * left of the body is then read and dropped by the connection, never kept.
 */
function parseMultipart(
  request: FastifyRequest,
  payload: NodeJS.ReadableStream,
  done: (error: Error | null, body?: unknown) => void,
): void {
  const limit = request.routeOptions.bodyLimit ?? 1024 * 1024;
  if (Number(request.headers['content-length']) > limit) {
    done(new ApiError('PAYLOAD_TOO_LARGE'));
    return;
  }
  let parser: ReturnType<typeof Busboy>;
  try {
    parser = Busboy({
      headers: request.headers as { 'content-type': string },
      // A part's headers (its name among them) are bounded by busboy's header size limit, its value by the body's.
      limits: {
        fieldSize: limit,
        fields: FORM_PART_LIMIT,
        parts: FORM_PART_LIMIT,
        headerPairs: 16,
      },
    });
  } catch {
    done(refusal('malformed multipart body (no boundary in its Content-Type)'));
    return;
  }
  const fields: string[] = [];
  let received = 0;
  let settled = false;

  const settle = (error: Error | null, body?: unknown) => {
    if (settled) return;
    settled = true;
    payload.removeListener('data', count);
    payload.removeListener('error', failed);
    payload.unpipe(parser);
    // Whatever is still coming is read and dropped, so the connection can answer.
    payload.resume();
    done(error, body);
  };
  const count = (chunk: Buffer | string) => {
    received += chunk.length;
    if (received > limit) settle(new ApiError('PAYLOAD_TOO_LARGE'));
  };
  const failed = (error: Error) => settle(error);

  parser.on('field', (name: string, value: string) => {
    fields.push(`${percent(name)}=${percent(value)}`);
  });
  parser.on('file', (name: string, stream: NodeJS.ReadableStream) => {
    stream.resume();
    const field = name === '' || name.length > NAMED_FIELD_MAX ? 'body' : name;
    settle(refusal('is a file: files are not uploaded, media are given by URL (e.g. params[image][url])', field));
  });
  parser.on('fieldsLimit', () => settle(refusal(PARTS_PROBLEM)));
  parser.on('partsLimit', () => settle(refusal(PARTS_PROBLEM)));
  parser.on('error', () => settle(refusal('malformed multipart body')));
  parser.on('finish', () => {
    if (settled) return;
    try {
      settle(null, asRouteBody(request, parseFormFields(fields.join('&'))));
    } catch (error) {
      settle(error as Error);
    }
  });
  payload.on('data', count);
  payload.on('error', failed);
  payload.pipe(parser);
}

/** Registers the form parsers beside JSON's. */
export function installFormBodies(app: FastifyInstance): void {
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (request, text, done) => {
    try {
      done(null, asRouteBody(request, parseFormFields(text as string)));
    } catch (error) {
      done(error as Error, undefined);
    }
  });
  app.addContentTypeParser('multipart/form-data', (request, payload, done) => parseMultipart(request, payload, done));
}
