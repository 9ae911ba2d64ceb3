/**
 * Schema building blocks shared by every feature: the envelopes, nullable
 * values, the error body. Each API shape is defined once as a TypeBox schema
 * that validates requests, serialises answers, types handlers and feeds the
 * OpenAPI document.
 */
import { Type, type TSchema } from '@sinclair/typebox';
import { PHONE_PATTERN } from '../phone-number.js';

export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

export const ErrorEnvelope = Type.Object(
  {
    code: Type.Integer({ description: 'Equals the HTTP status' }),
    status: Type.Integer({ description: 'The same integer as `code`' }),
    message: Type.String(),
    error: Type.Optional(Type.String({ description: 'Detail' })),
    errors: Type.Optional(
      Type.Record(Type.String(), Type.Array(Type.String()), { description: 'Field path to messages' }),
    ),
  },
  { title: 'Error' },
);

/**
 * Every answer carries both `code` and `status`, the same integer (docs/internals.md, Whatspie compatibility): the spec shows `status` on device
 * bodies (7.1) and `code` elsewhere, and clients of the hosted service read either. Handlers may return one of the
 * two; `installTwinStatus` (http/envelope.ts) adds the other before serialisation.
 */
const codes = {
  code: Type.Integer({ description: 'Equals the HTTP status' }),
  status: Type.Integer({ description: 'The same integer as `code`' }),
};

/** Device bodies (spec 7.1 names the field `status`). */
export const DeviceEnvelope = <T extends TSchema>(data: T, extra: Record<string, TSchema> = {}) =>
  Type.Object({ ...codes, message: Type.String(), data, ...extra });

/** Every other success body. */
export const CodeEnvelope = <T extends TSchema>(data: T, extra: Record<string, TSchema> = {}) =>
  Type.Object({ ...codes, message: Type.String(), data, ...extra });

/** A body with no data (health answers). */
export const MessageEnvelope = Type.Object({ ...codes, message: Type.String() });

/** The error answers a route documents besides its success, by status. */
export const errorResponses = (...statuses: number[]) =>
  Object.fromEntries(statuses.map((status) => [status, ErrorEnvelope]));

/** The pattern of a name that is not only whitespace; a failure reads "must not be blank". */
export const NOT_BLANK = '\\S';

/**
 * A name given by a client (devices, tokens, groups): up to maxLength characters, not empty and not all
 * whitespace. The pattern alone says both, so an empty name gets one message, not two.
 */
export const NameString = (maxLength: number, options: { description?: string } = {}) =>
  Type.String({ maxLength, pattern: NOT_BLANK, ...options });

/**
 * The body of an action that takes no fields: declared, so clients generated from the document send
 * `{}`, and optional, so no body, an empty form or a JSON object all do; fields sent anyway are
 * ignored, as the hosted service's clients may send their own (docs/internals.md, Whatspie compatibility).
 */
export const NoFieldsBody = Type.Optional(
  Type.Object(
    {},
    {
      description: 'No fields: send `{}`, an empty form or no body at all (fields sent anyway are ignored)',
      examples: [{}],
    },
  ),
);

export const IdParams = Type.Object({ id: Type.Integer({ minimum: 1, maximum: 2 ** 53 - 1 }) });

export const PageQuery = Type.Object({
  page: Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1 }),
  per_page: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
});

export const PageMeta = Type.Object({
  page: Type.Integer(),
  per_page: Type.Integer(),
  total: Type.Integer(),
});

/** Spec 4.5 rule 1 (src/phone-number.ts, shared with the dashboard, which normalises what people type to it). */
export { PHONE_PATTERN };
/** The words every phone refusal uses (never the pattern itself). */
export const PHONE_RULE =
  'must be a phone number in international format: digits only, country code first, no +, no leading 0, 7 to 15 digits';
export const isPhoneNumber = (value: unknown): value is string =>
  typeof value === 'string' && PHONE_PATTERN.test(value);

/** A group's network id (docs/internals.md, Whatspie compatibility): one long number, or the creator's number and a time; then `@g.us`. */
export const GROUP_JID_PATTERN = /^[0-9]{5,40}(?:-[0-9]{1,20})?@g\.us$/;
/** `{group_id}` of a route: the gateway's id (digits, no leading zero) or a group's network id. */
export const GROUP_REF_PATTERN = /^(?:[1-9][0-9]{0,15}|[0-9]{5,40}(?:-[0-9]{1,20})?@g\.us)$/;
export const GROUP_REF_RULE = 'must be a group’s id: the gateway’s number for it, or its network id ending in @g.us';

const TYPE_WORDS: Record<string, string> = {
  string: 'a string',
  object: 'an object',
  array: 'an array',
  boolean: 'a boolean',
  number: 'a number',
  integer: 'an integer',
  null: 'null',
};

/** A JSON type as a validation message says it (`must be an integer`), for every route's validator. */
export function typeWords(type: string): string {
  return TYPE_WORDS[type] ?? type;
}
