// Owns the building blocks of the message schemas (src/messages/schemas.ts and its companions): the codes a
// field can be refused with, the rules the validator's own keywords carry (src/messages/checks.ts), and the
// field shapes several types share (texts with a limit, phones, URLs, a media `{url}`). It must never hold
// logic or a type's params: those are in the schema files.
import { Type } from '@sinclair/typebox';
import { PHONE_PATTERN, PHONE_RULE } from '../shapes.js';
import { URL_MAX_LENGTH } from './forms.js';

/** The codes a body can be refused with besides INVALID_MESSAGE_TYPE, most structural first. */
export type ViolationCode =
  | 'VALIDATION_FAILED'
  | 'INVALID_PHONE'
  | 'INVALID_IMAGE_URL'
  | 'INVALID_MEDIA_URL'
  | 'INVALID_LIST'
  | 'INVALID_CONTACT'
  | 'INVALID_POLL'
  | 'MESSAGE_TOO_LONG';

export interface TextRule {
  /** Limit in user-perceived characters. */
  readonly max: number;
  readonly required: boolean;
  /** Code for a value over `max` (default: the code of the field's region). */
  readonly tooLong?: ViolationCode;
  /** Identifiers (row ids, reply ids) need only be non-empty; texts shown to a person must be visible too. */
  readonly identifier?: boolean;
}

export type CheckName = 'url' | 'mimetype' | 'fileName' | 'callNumber';

/** A form check, and the code of the value it refuses (default: the code of the field's region). */
export type CheckRule = CheckName | { readonly name: CheckName; readonly code: ViolationCode };

export { PHONE_RULE };

export const CALL_NUMBER_RULE = 'must be a phone number in international format: country code first, digits only';

export const plural = (count: number, noun: string) => `${count} ${noun}${count === 1 ? '' : 's'}`;

/** A text with a limit in user-perceived characters (emoji with modifiers count once). */
export const Text = (rule: TextRule, description?: string) =>
  Type.String({
    'x-text': rule,
    description: [description, `At most ${rule.max} characters (user-perceived).`].filter(Boolean).join(' '),
  });

export const Phone = (description: string) =>
  Type.String({
    pattern: PHONE_PATTERN.source,
    description,
    examples: ['6281234567890'],
    'x-code': 'INVALID_PHONE',
    'x-messages': { '*': PHONE_RULE },
  });

export const HttpUrl = (code: ViolationCode, description: string) =>
  Type.String({
    'x-check': { name: 'url', code },
    description: `${description}; at most ${URL_MAX_LENGTH} characters`,
    format: 'uri',
  });

/** `{url}`: where the gateway downloads the media from when the message is accepted. */
export const MediaContainer = (code: ViolationCode, what: string) =>
  Type.Object(
    { url: HttpUrl(code, `Absolute http(s) URL of the ${what}; fetched when the message is accepted`) },
    { 'x-messages': { type: 'must be an object with a url' } },
  );
