/**
 * Schema building blocks shared by every feature: the envelopes, nullable
 * values, the error body. Each API shape is defined once as a TypeBox schema
 * that validates requests, serialises answers, types handlers and feeds the
 * OpenAPI document.
 */
import { Type, type TSchema } from '@sinclair/typebox';

// The parts with no HTTP in them live in src/shapes.ts (services use them too); routes keep finding them here.
export {
  GROUP_JID_PATTERN,
  GROUP_REF_PATTERN,
  GROUP_REF_RULE,
  Nullable,
  PHONE_PATTERN,
  PHONE_RULE,
  isPhoneNumber,
  typeWords,
} from '../shapes.js';

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
