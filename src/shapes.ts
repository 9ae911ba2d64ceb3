/**
 * The vocabulary the API's shapes share that carries no HTTP in it: a nullable value, the phone number and
 * group id rules with the words every refusal uses, and how a JSON type is said in a message. Services,
 * request schemas and presenters use it; src/http/schemas.ts builds the envelopes on top of it.
 *
 * Owns: those rules, once. Must never: import anything of the gateway but src/phone-number.ts.
 */
import { Type, type TSchema } from '@sinclair/typebox';
import { PHONE_PATTERN } from './phone-number.js';

export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

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
