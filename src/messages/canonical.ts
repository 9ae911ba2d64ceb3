// Owns the one place where a send body as a client sent it becomes the canonical body the schemas
// describe (src/messages/schemas.ts): `null` reads as absent (most client libraries send null for
// an optional field they have no value for), only own fields count, a chat's text may come in the
// top-level `message` (DECISIONS 5), and a missing media container or location reads as an empty
// one so that the answer names the field it needs. It also records, for each canonical path that
// came from another field, the path the client used, so findings name what the client sent. It
// must never validate, never decide a business rule, and never put a request value into a path.
import { MESSAGE_TYPES, type MessageType } from './schemas.js';

export interface CanonicalBody {
  readonly body: Record<string, unknown>;
  /** Canonical path → the path the client sent it under (only for fields that moved). */
  readonly sentAs: ReadonlyMap<string, string>;
}

/** Nesting beyond which values are kept as sent (the HTTP layer refuses deeper bodies). */
const COPY_DEPTH = 32;

export const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** A copy of a JSON value whose objects have no null fields and no inherited ones. */
function withoutNulls(value: unknown, depth = 0): unknown {
  if (depth > COPY_DEPTH) return value;
  if (Array.isArray(value)) return value.map((item: unknown) => withoutNulls(item, depth + 1));
  if (!isRecord(value)) return value;
  // No prototype: a `__proto__` field is data, never a prototype, and `constructor` is never inherited.
  const copy: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
  for (const key of Object.keys(value)) {
    const item = value[key];
    if (item !== null && item !== undefined) copy[key] = withoutNulls(item, depth + 1);
  }
  return copy;
}

const CONTAINERS: Partial<Record<MessageType, string>> = {
  image: 'image',
  video: 'video',
  audio: 'audio',
  file: 'document',
  location: 'location',
};

export const isMessageType = (value: unknown): value is MessageType =>
  typeof value === 'string' && (MESSAGE_TYPES as readonly string[]).includes(value);

/** The canonical body of a send request body that is a JSON object. */
export function canonicalBody(sent: Record<string, unknown>): CanonicalBody {
  const body = withoutNulls(sent) as Record<string, unknown>;
  const sentAs = new Map<string, string>();
  const { type, params } = body;
  if (type === 'chat' && body.message !== undefined && (params === undefined || isRecord(params))) {
    if (params === undefined || params.text === undefined) {
      body.params = Object.assign(Object.create(null) as object, params, { text: body.message });
      sentAs.set('params.text', 'message');
    }
  }
  const container = isMessageType(type) ? CONTAINERS[type] : undefined;
  if (container !== undefined && isRecord(params) && params[container] === undefined) {
    params[container] = Object.create(null);
  }
  return { body, sentAs };
}
