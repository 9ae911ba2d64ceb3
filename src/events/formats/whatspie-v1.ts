/**
 * The `whatspie_v1` webhook format (docs/internals.md, Whatspie compatibility): incoming messages only, as
 * the flat body Whatspie's receivers read:
 *
 *   {message, from, timestamp, message_id, from_user: {name, jid}}
 *   + for media: type (imageMessage, videoMessage, audioMessage,
 *     documentMessage) and file {url, caption, fileName, mimetype}
 *   + for a location: type locationMessage and location {degreesLatitude, degreesLongitude}
 *   + in a group: `from` is the group's id and `participant` the sender's number
 *
 * Owns: that mapping from the stored `message.incoming` event (whose `data`
 * is the message object, messages/present.ts). `message_id` is the gateway's
 * message id (what `GET /messages/{id}` and `params.quotedMessageId` take);
 * `timestamp` is when the network says it was sent, in Unix seconds; `file.url`
 * is the message object's `file_url` (for incoming media the gateway's signed
 * URL of its stored copy, src/media/links.ts); `from_user.name` is the sender's number, since the
 * network gives the gateway no display name.
 * Must never: add a field the stored event does not justify.
 */
import type { EventType, StoredEvent } from '../types.js';

export const WHATSPIE_V1_TYPES: ReadonlySet<EventType> = new Set<EventType>(['message.incoming']);

const MEDIA_TYPES: Readonly<Record<string, string>> = {
  image: 'imageMessage',
  video: 'videoMessage',
  audio: 'audioMessage',
  file: 'documentMessage',
};

const text = (value: unknown): string | null => (typeof value === 'string' ? value : null);

/** The personal JID Whatspie's receivers expect beside a number. */
/** A number's personal JID; a sender stored as a LID form (`12345@lid`, WhatsApp) is already one. */
export const personalJid = (phone: string): string => (phone.endsWith('@lid') ? phone : `${phone}@s.whatsapp.net`);

/** The v1 body of an incoming message (also the `data` of v2's `message_incoming`). */
export function whatspieIncoming(message: Record<string, unknown>): Record<string, unknown> {
  const params = (message.params ?? {}) as Record<string, unknown>;
  const sender = text(message.sender) ?? '';
  const group = text(params.group_id);
  const sentAt = text(message.sent_at) ?? text(message.timestamp);
  const type = String(message.type);
  const body: Record<string, unknown> = {
    message: text(message.message) ?? '',
    from: group ?? sender,
    timestamp: sentAt === null ? null : Math.floor(Date.parse(sentAt) / 1000),
    message_id: message.id,
    from_user: { name: sender, jid: personalJid(sender) },
  };
  const media = MEDIA_TYPES[type];
  if (media !== undefined) {
    body.type = media;
    body.file = {
      url: text(message.file_url),
      caption: text(params.caption),
      fileName: text(params.fileName),
      mimetype: text(params.mimetype),
    };
  } else if (type === 'location') {
    body.type = 'locationMessage';
    body.location = params.location ?? null;
  }
  if (group !== null) body.participant = sender;
  return body;
}

export function renderWhatspieV1(event: StoredEvent): Record<string, unknown> {
  return whatspieIncoming(event.data);
}
