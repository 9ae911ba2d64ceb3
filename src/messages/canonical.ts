// Owns the one place where a send body as a client sent it becomes the canonical body the schemas
// describe (src/messages/schemas.ts), so the services below see only canonical input:
// - `null` reads as absent (most client libraries send null for an optional field they have no
//   value for), and only own fields count;
// - a chat's text may come in the top-level `message` (docs/internals.md, Sending);
// - the older shapes of docs/internals.md, Whatspie compatibility: `type` missing or `"text"` means chat; for media, a top-level
//   `file_url` is the URL and a top-level `message` the caption; a video may come as `type: "file"`
//   with `params.video`; a location as `params.lat`/`params.long` (with `params.name`/`params.address`) or top-level
//   `latitude`/`longitude`/`location_name`; quick-reply buttons as
//   `params.buttons: [{buttonId, buttonText: {displayText}}]`;
// - a missing media container or location reads as an empty one, so the answer names the field
//   it needs;
// - a mention may come as a WhatsApp user id (`62812...@s.whatsapp.net`, as older clients send
//   them): it is the number before the `@`.
// It records, for each canonical path that came from another field, the path the client used, so
// findings name what the client sent. It must never validate, never decide a business rule, and
// never put a request value into a path.
import { TEMPLATE_LIMITS } from './limits.js';
import { MESSAGE_TYPES, type MessageType } from './schemas.js';

export interface CanonicalBody {
  readonly body: Record<string, unknown>;
  /** Canonical path → the path the client sent it under (only for fields that moved). */
  readonly sentAs: ReadonlyMap<string, string>;
}

/** A WhatsApp user id: the number, then the user server (`@s.whatsapp.net`, or the older `@c.us`). */
const USER_ID = /^([0-9]+)@(?:s\.whatsapp\.net|c\.us)$/;

/** Nesting beyond which values are kept as sent (the HTTP layer refuses deeper bodies). */
const COPY_DEPTH = 32;

export const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const record = (): Record<string, unknown> => Object.create(null) as Record<string, unknown>;

/** A copy of a JSON value whose objects have no null fields and no inherited ones. */
function withoutNulls(value: unknown, depth = 0): unknown {
  if (depth > COPY_DEPTH) return value;
  if (Array.isArray(value)) return value.map((item: unknown) => withoutNulls(item, depth + 1));
  if (!isRecord(value)) return value;
  // No prototype: a `__proto__` field is data, never a prototype, and `constructor` is never inherited.
  const copy = record();
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
};

export const isMessageType = (value: unknown): value is MessageType =>
  typeof value === 'string' && (MESSAGE_TYPES as readonly string[]).includes(value);

/** Moves `from[fromKey]` to `to[toKey]` unless `to` already has one; notes where it came from. */
function move(
  sentAs: Map<string, string>,
  from: Record<string, unknown>,
  fromKey: string,
  fromPath: string,
  to: Record<string, unknown>,
  toKey: string,
  toPath: string,
): void {
  if (from[fromKey] === undefined || to[toKey] !== undefined) return;
  to[toKey] = from[fromKey];
  sentAs.set(toPath, fromPath);
}

/** The object under `key` of `parent`, made if absent; undefined when something else is there. */
function objectAt(parent: Record<string, unknown>, key: string): Record<string, unknown> | undefined {
  if (parent[key] === undefined) parent[key] = record();
  const value = parent[key];
  return isRecord(value) ? value : undefined;
}

/** `params.buttons` (quick replies, as older clients send them) as `templateButtons`. */
function buttonsAsTemplate(params: Record<string, unknown>, sentAs: Map<string, string>): void {
  const buttons = params.buttons;
  if (buttons === undefined || params.templateButtons !== undefined) return;
  sentAs.set('params.templateButtons', 'params.buttons');
  if (!Array.isArray(buttons)) {
    params.templateButtons = buttons;
    return;
  }
  // Past the count limit the items are not checked (nor mapped one by one): the answer names the count.
  if (buttons.length > TEMPLATE_LIMITS.buttons) {
    params.templateButtons = buttons;
    return;
  }
  params.templateButtons = buttons.map((button: unknown, i) => {
    if (!isRecord(button)) return button;
    const at = `params.templateButtons.${i}`;
    const sent = `params.buttons.${i}`;
    const label = button.buttonText;
    const reply = record();
    reply.displayText = isRecord(label) ? label.displayText : label;
    reply.id = button.buttonId;
    sentAs.set(`${at}.quickReplyButton.displayText`, `${sent}.buttonText.displayText`);
    sentAs.set(`${at}.quickReplyButton.id`, `${sent}.buttonId`);
    sentAs.set(`${at}.quickReplyButton`, sent);
    sentAs.set(at, sent);
    const canonical = record();
    canonical.index = i + 1;
    canonical.quickReplyButton = reply;
    return canonical;
  });
}

/** The canonical body of a send request body that is a JSON object. */
export function canonicalBody(sent: Record<string, unknown>): CanonicalBody {
  const body = withoutNulls(sent) as Record<string, unknown>;
  const sentAs = new Map<string, string>();

  if (body.type === undefined || body.type === 'text') body.type = 'chat';
  if (body.type === 'file' && isRecord(body.params) && body.params.video !== undefined) body.type = 'video';
  const type = body.type;

  if (type === 'chat' && body.message !== undefined && (body.params === undefined || isRecord(body.params))) {
    const params = objectAt(body, 'params') as Record<string, unknown>;
    move(sentAs, body, 'message', 'message', params, 'text', 'params.text');
  }

  const container = isMessageType(type) ? CONTAINERS[type] : undefined;
  if (container !== undefined && (body.params === undefined || isRecord(body.params))) {
    const hasAlias = body.file_url !== undefined || body.message !== undefined;
    if (body.params !== undefined || hasAlias) {
      const params = objectAt(body, 'params') as Record<string, unknown>;
      const media = objectAt(params, container);
      if (media !== undefined) {
        move(sentAs, body, 'file_url', 'file_url', media, 'url', `params.${container}.url`);
      }
      if (type !== 'audio') move(sentAs, body, 'message', 'message', params, 'caption', 'params.caption');
    }
  }

  if (type === 'location' && (body.params === undefined || isRecord(body.params))) {
    const topLevel = body.latitude !== undefined || body.longitude !== undefined || body.location_name !== undefined;
    if (body.params !== undefined || topLevel) {
      const params = objectAt(body, 'params') as Record<string, unknown>;
      const location = objectAt(params, 'location');
      if (location !== undefined) {
        const at = 'params.location';
        move(sentAs, params, 'lat', 'params.lat', location, 'degreesLatitude', `${at}.degreesLatitude`);
        move(sentAs, params, 'long', 'params.long', location, 'degreesLongitude', `${at}.degreesLongitude`);
        // The client that sends params.lat/long sends the place's name and address beside them.
        move(sentAs, params, 'name', 'params.name', location, 'name', `${at}.name`);
        move(sentAs, params, 'address', 'params.address', location, 'address', `${at}.address`);
        move(sentAs, body, 'latitude', 'latitude', location, 'degreesLatitude', `${at}.degreesLatitude`);
        move(sentAs, body, 'longitude', 'longitude', location, 'degreesLongitude', `${at}.degreesLongitude`);
        move(sentAs, body, 'location_name', 'location_name', location, 'name', `${at}.name`);
      }
    }
  }

  if (type === 'template' && isRecord(body.params)) buttonsAsTemplate(body.params, sentAs);
  if (isRecord(body.params) && Array.isArray(body.params.mentions)) {
    body.params.mentions = body.params.mentions.map((mention: unknown) => {
      const user = typeof mention === 'string' ? USER_ID.exec(mention) : null;
      return user === null ? mention : user[1];
    });
  }
  return { body, sentAs };
}
