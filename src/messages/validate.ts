// Owns the validation of a `POST /messages` (and group send) request body: it turns an untrusted
// JSON value into a ValidatedMessage (what to store, echo and send) or throws the one ApiError the
// spec names. The body is first made canonical (src/messages/canonical.ts: the legacy
// and alias shapes of docs/internals.md, Whatspie compatibility become the canonical one there, and only there), then
// checked against the schemas of src/messages/schemas.ts, which are also the OpenAPI document's;
// every finding is collected before answering (src/messages/problems.ts decides the code), except
// an unknown `type`, which is answered at once since it decides what the params must be.
// It must never do I/O (media URLs are checked for form only; fetching happens in src/outbound),
// never look at devices, quota or the store, and never throw anything but an ApiError.
import { ApiError } from '../errors.js';
import { formValueAs, isFormBody } from '../forms.js';
import type { NetworkMessageContent } from '../network/network.js';
import { canonicalBody, isMessageType, isRecord } from './canonical.js';
import { compile, findings, isCompiled, type Finding } from './checks.js';
import { buildContact, buildPoll } from './contact-poll.js';
import { buildList } from './list.js';
import { buildLocation } from './location.js';
import { buildMedia, type MediaKind, type MediaRequest } from './media.js';
import { refusal } from './problems.js';
import {
  CommonFields,
  MESSAGE_TYPES,
  PARAMS,
  REPLY_PARAMS,
  SenderFields,
  type MessageType,
  type ViolationCode,
} from './schemas.js';
import { buildTemplate } from './template.js';
import type { TSchema } from '@sinclair/typebox';

export { countCharacters } from './text.js';
export { MEDIA_LIMITS, type MediaKind, type MediaRequest } from './media.js';
export { LIST_LIMITS, LOCATION_TEXT_MAX, TEMPLATE_LIMITS, TEXT_MAX, type ListLimits } from './limits.js';
export { validateListParams, type ParsedList } from './list.js';
export { URL_MAX_LENGTH, FILE_NAME_MAX } from './forms.js';
export { MAX_REPORTED_PATHS } from './problems.js';
export { MESSAGE_TYPES, type MessageType } from './schemas.js';

export interface ValidatedMessage {
  /** Sender phone. */
  device: string;
  /** Null only when options.requireReceiver is false (group sends). */
  receiver: string | null;
  /** `reaction` only from reply by response (reaction.ts), never from a request body. */
  type: MessageType | 'reaction';
  simulateTyping: 0 | 1;
  /** Chat text, or the caption of media, or the list/template text: what the Message shows as `message` (null if none). */
  message: string | null;
  /** The params as stored and echoed back in the Message's `params` (only known fields; for chat `{text}`). */
  params: Record<string, unknown>;
  /** Media to fetch before sending (null for chat, list, location, template). */
  media: MediaRequest | null;
  /** Network content for non-media types; null for media types (built after fetching). */
  content: NetworkMessageContent | null;
  /** Numbers mentioned (`params.mentions`, each once, in the order given); absent when none. */
  mentions?: string[];
  /** `params.quotedMessageId`: the message this one replies to, not yet looked up; absent when no reply. */
  quotedMessageId?: string;
}

export interface ValidateOptions {
  /** False for group sends, whose body has no `receiver` (a given one is ignored). */
  requireReceiver: boolean;
}

const MESSAGE_SCHEMAS: readonly object[] = [
  CommonFields,
  SenderFields,
  ...Object.values(PARAMS),
  ...Object.values(REPLY_PARAMS),
];

/**
 * Compiles the message schemas one per turn of the event loop, starting at the next turn; the returned function
 * stops it. The gateway starts this once it listens (app.ts): compiling them all took 100–140 ms of a start's
 * CPU before its first send (bench/README.md, A restart's module loading), and one at a time none holds the event
 * loop for long. A request that comes first compiles what it needs itself (checks.ts, `compile`).
 */
export function compileMessageSchemasInTurns(): () => void {
  const left = MESSAGE_SCHEMAS.filter((schema) => !isCompiled(schema));
  let stopped = false;
  const next = () => {
    const schema = left.shift();
    if (stopped || schema === undefined) return;
    compile(schema);
    if (left.length > 0) setImmediate(next);
  };
  if (left.length > 0) setImmediate(next);
  return () => {
    stopped = true;
  };
}

const MEDIA_TYPES: ReadonlySet<string> = new Set<MediaKind>(['image', 'video', 'audio', 'file', 'sticker']);

/** Types whose params are refused with their own code, the paths shown relative to `params` (docs/api.md). */
const OWN_CODES: Partial<Record<MessageType, ViolationCode>> = {
  list: 'INVALID_LIST',
  contact: 'INVALID_CONTACT',
  poll: 'INVALID_POLL',
};

type Built = Pick<ValidatedMessage, 'message' | 'params' | 'media' | 'content'>;

function build(type: MessageType, params: Record<string, unknown>): Built {
  if (type === 'chat') {
    const text = params.text as string;
    // Only `false` is kept: a preview is the default, decided when the message is sent.
    const noPreview = params.link_preview === false ? { link_preview: false } : {};
    return { message: text, params: { text, ...noPreview }, media: null, content: { type: 'chat', text } };
  }
  if (type === 'contact') {
    const contact = buildContact(params);
    return { message: null, params: contact.params, media: null, content: contact.content };
  }
  if (type === 'poll') {
    const poll = buildPoll(params);
    return { message: poll.content.name, params: poll.params, media: null, content: poll.content };
  }
  if (MEDIA_TYPES.has(type)) {
    const { params: echoed, media, message } = buildMedia(type as MediaKind, params);
    return { message, params: echoed, media, content: null };
  }
  if (type === 'list') {
    const list = buildList(params);
    return { message: list.content.text, params: list.params, media: null, content: list.content };
  }
  if (type === 'location') {
    const location = buildLocation(params);
    return { message: null, params: location.params, media: null, content: location.content };
  }
  const template = buildTemplate(params);
  return { message: template.content.text, params: template.params, media: null, content: template.content };
}

function paramsFindings(type: MessageType, params: unknown): Finding[] {
  if (params === undefined) return [{ path: 'params', code: 'VALIDATION_FAILED', message: 'is required' }];
  if (!isRecord(params)) return [{ path: 'params', code: 'VALIDATION_FAILED', message: 'must be an object' }];
  const own = OWN_CODES[type];
  return [
    ...findings(PARAMS[type], params, {
      at: 'params',
      code: own ?? 'VALIDATION_FAILED',
      relative: own !== undefined,
    }),
    ...findings(REPLY_PARAMS[type], params, { at: 'params', code: 'VALIDATION_FAILED' }),
  ];
}

/** The reply fields (only those given): echoed in the message's params beside its own, and carried to the network. */
function replyFields(params: Record<string, unknown>): Pick<ValidatedMessage, 'mentions' | 'quotedMessageId'> {
  return {
    ...(Array.isArray(params.mentions) ? { mentions: [...new Set(params.mentions as string[])] } : {}),
    ...(typeof params.quotedMessageId === 'string' ? { quotedMessageId: params.quotedMessageId } : {}),
  };
}

/**
 * A form body's texts read as the schemas of its type place them (src/forms.ts), once it
 * is canonical, so a location sent as `params[lat]=-6.2` is a number like `degreesLatitude` is.
 */
function fromForm(body: Record<string, unknown>, type: MessageType, common: TSchema): Record<string, unknown> {
  const typed = formValueAs(common, body) as Record<string, unknown>;
  if (isRecord(body.params)) typed.params = formValueAs(PARAMS[type], body.params);
  return typed;
}

/**
 * Validates a send request body. Throws ApiError (always HTTP 400): INVALID_MESSAGE_TYPE for an
 * unknown type; otherwise VALIDATION_FAILED naming every failing field when any field is missing
 * or of the wrong JSON type, else the specific code the spec names (INVALID_PHONE,
 * INVALID_IMAGE_URL, INVALID_MEDIA_URL, INVALID_LIST, MESSAGE_TOO_LONG) naming its fields.
 */
export function validateSendRequest(sent: unknown, options: ValidateOptions): ValidatedMessage {
  if (!isRecord(sent)) throw new ApiError('VALIDATION_FAILED', { errors: { body: ['must be an object'] } });
  const canonical = canonicalBody(sent);
  const { sentAs } = canonical;
  // After canonicalBody() a missing type is `chat` (docs/internals.md, Whatspie compatibility).
  const type = canonical.body.type;
  if (!isMessageType(type)) {
    throw new ApiError('INVALID_MESSAGE_TYPE', { error: `type must be one of: ${MESSAGE_TYPES.join(', ')}` });
  }
  const common = options.requireReceiver ? CommonFields : SenderFields;
  const body = isFormBody(sent) ? fromForm(canonical.body, type, common) : canonical.body;
  const found: Finding[] = [
    ...findings(common, body, { at: '', code: 'VALIDATION_FAILED' }),
    ...paramsFindings(type, body.params),
  ];
  if (found.length > 0) {
    throw refusal(found.map((finding) => ({ ...finding, path: sentAs.get(finding.path) ?? finding.path })));
  }
  const validType = type;
  const params = body.params as Record<string, unknown>;
  const built = build(validType, params);
  const reply = replyFields(params);
  return {
    device: body.device as string,
    receiver: options.requireReceiver ? (body.receiver as string) : null,
    type: validType,
    simulateTyping: body.simulate_typing === 1 || body.simulate_typing === true ? 1 : 0,
    ...built,
    params: { ...built.params, ...reply },
    ...reply,
  };
}
