// Owns the validation of a `POST /messages` (and group send) request body: it turns an untrusted
// JSON value into a ValidatedMessage (what to store, echo and send) or throws the one ApiError that
// the spec and DECISIONS name for the first kind of problem found. Checks run in a fixed order:
// body, type, device/receiver, simulate_typing, then the params of the type.
// It must never do I/O (media URLs are checked for form only; fetching happens in src/outbound),
// never look at devices, quota or the store, and never throw anything but an ApiError.
import { ApiError } from '../http/errors.js';
import { isPhoneNumber } from '../http/schemas.js';
import type { NetworkMessageContent } from '../network/network.js';
import { TEXT_MAX } from './limits.js';
import { parseList } from './list.js';
import { parseLocation } from './location.js';
import { parseMedia, type MediaKind, type MediaRequest } from './media.js';
import { field, isRecord, Problems, readText } from './problems.js';
import { parseTemplate } from './template.js';

export { countCharacters } from './text.js';
export { MEDIA_LIMITS, type MediaKind, type MediaRequest } from './media.js';
export { LIST_LIMITS, LOCATION_TEXT_MAX, TEMPLATE_LIMITS, TEXT_MAX, type ListLimits } from './limits.js';
export { validateListParams, type ParsedList } from './list.js';
export { URL_MAX_LENGTH, FILE_NAME_MAX } from './forms.js';
export { MAX_REPORTED_PATHS } from './problems.js';

export const MESSAGE_TYPES = ['chat', 'image', 'list', 'file', 'video', 'audio', 'location', 'template'] as const;
export type MessageType = (typeof MESSAGE_TYPES)[number];

export interface ValidatedMessage {
  /** Sender phone. */
  device: string;
  /** Null only when options.requireReceiver is false (group sends). */
  receiver: string | null;
  type: MessageType;
  simulateTyping: 0 | 1;
  /** Chat text, or the caption of media, or the list/template text: what the Message shows as `message` (null if none). */
  message: string | null;
  /** The params as stored and echoed back in the Message's `params` (only known fields; for chat `{text}`). */
  params: Record<string, unknown>;
  /** Media to fetch before sending (null for chat, list, location, template). */
  media: MediaRequest | null;
  /** Network content for non-media types; null for media types (built after fetching). */
  content: NetworkMessageContent | null;
}

export interface ValidateOptions {
  /** False for group sends, whose body has no `receiver` (a given one is ignored). */
  requireReceiver: boolean;
}

const PHONE_RULE =
  'must be a phone number in international format: digits only, country code first, no +, no leading 0, 7 to 15 digits';

const MEDIA_TYPES: ReadonlySet<string> = new Set<MediaKind>(['image', 'video', 'audio', 'file']);

function isMessageType(value: unknown): value is MessageType {
  return typeof value === 'string' && (MESSAGE_TYPES as readonly string[]).includes(value);
}

function readType(body: Record<string, unknown>): MessageType {
  const type = field(body, 'type');
  if (type === undefined) throw new ApiError('VALIDATION_FAILED', { errors: { type: ['is required'] } });
  if (!isMessageType(type)) {
    throw new ApiError('INVALID_MESSAGE_TYPE', { error: `type must be one of: ${MESSAGE_TYPES.join(', ')}` });
  }
  return type;
}

function readAddresses(body: Record<string, unknown>, requireReceiver: boolean) {
  const problems = new Problems();
  const read = (key: 'device' | 'receiver'): string => {
    const value = field(body, key);
    if (value === undefined) problems.add('VALIDATION_FAILED', key, 'is required');
    else if (!isPhoneNumber(value)) problems.add('INVALID_PHONE', key, PHONE_RULE);
    else return value;
    return '';
  };
  const device = read('device');
  const receiver = requireReceiver ? read('receiver') : null;
  problems.throwIfAny();
  return { device, receiver };
}

function readSimulateTyping(body: Record<string, unknown>): 0 | 1 {
  const value = field(body, 'simulate_typing');
  if (value === undefined || value === 0 || value === false) return 0;
  if (value === 1 || value === true) return 1;
  throw new ApiError('VALIDATION_FAILED', { errors: { simulate_typing: ['must be 0 or 1'] } });
}

type Parsed = Pick<ValidatedMessage, 'message' | 'params' | 'media' | 'content'>;

/** Chat: `params.text`, or the top-level `message` when params.text is absent (DECISIONS 5). */
function parseChat(params: Record<string, unknown>, body: Record<string, unknown>, problems: Problems): Parsed {
  const fromParams = field(params, 'text');
  const [path, value] = fromParams === undefined ? ['message', field(body, 'message')] : ['params.text', fromParams];
  // Nothing anywhere: name the field the spec documents.
  const text =
    readText(problems, value === undefined ? 'params.text' : path, value, {
      max: TEXT_MAX,
      required: true,
      code: 'VALIDATION_FAILED',
      tooLong: 'MESSAGE_TOO_LONG',
    }) ?? '';
  return { message: text, params: { text }, media: null, content: { type: 'chat', text } };
}

function parseParams(type: MessageType, body: Record<string, unknown>): Parsed {
  const raw = field(body, 'params');
  // Only a chat whose text is in the top-level `message` can do without params.
  const optional = type === 'chat' && field(body, 'message') !== undefined;
  if (raw === undefined && !optional) {
    throw new ApiError('VALIDATION_FAILED', { errors: { params: ['is required'] } });
  }
  if (raw !== undefined && !isRecord(raw)) {
    throw new ApiError('VALIDATION_FAILED', { errors: { params: ['must be an object'] } });
  }
  const params = raw ?? {};
  const problems = new Problems();
  let parsed: Parsed;
  if (type === 'chat') {
    parsed = parseChat(params, body, problems);
  } else if (MEDIA_TYPES.has(type)) {
    const { params: echoed, media, message } = parseMedia(type as MediaKind, params, problems);
    parsed = { message, params: echoed, media, content: null };
  } else if (type === 'list') {
    const list = parseList(params, problems);
    parsed = { message: list.content.text, params: list.params, media: null, content: list.content };
  } else if (type === 'location') {
    const location = parseLocation(params, problems);
    parsed = { message: null, params: location.params, media: null, content: location.content };
  } else {
    const template = parseTemplate(params, problems);
    parsed = { message: template.content.text, params: template.params, media: null, content: template.content };
  }
  problems.throwIfAny();
  return parsed;
}

/**
 * Validates a send request body. Throws ApiError (always HTTP 400) naming the problems:
 * VALIDATION_FAILED for structure, or the specific code the spec names (INVALID_MESSAGE_TYPE,
 * INVALID_PHONE, MESSAGE_TOO_LONG, INVALID_LIST, INVALID_IMAGE_URL, INVALID_MEDIA_URL).
 */
export function validateSendRequest(body: unknown, options: ValidateOptions): ValidatedMessage {
  if (!isRecord(body)) throw new ApiError('VALIDATION_FAILED', { errors: { body: ['must be an object'] } });
  const type = readType(body);
  const { device, receiver } = readAddresses(body, options.requireReceiver);
  const simulateTyping = readSimulateTyping(body);
  const parsed = parseParams(type, body);
  return { device, receiver, type, simulateTyping, ...parsed };
}
