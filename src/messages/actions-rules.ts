/**
 * The pure rules of message actions (actions.ts): what a reaction's and an edit's body must be, the params of an
 * edited message, the chat and network target of a stored message, and the send body that forwards one (received
 * content included: its media is named, not read, here).
 *
 * Owns: those rules and their 400s (the contract's envelope, the field named).
 * Must never: do I/O, or throw anything but an ApiError.
 */
import { receivedChat } from '../chats/chat-key.js';
import { ApiError } from '../errors.js';
import type { ForwardableMedia } from '../media/index.js';
import type { QuotedMessage } from '../network/network.js';
import { TEXT_MAX } from './limits.js';
import { isOneEmoji } from './reaction.js';
import type { MessageRow } from './repository.js';

export const EMOJI_RULE = 'must be exactly one emoji, or "" to take the reaction away';
export const EDIT_TEXT_RULE = `must be a text of 1 to ${TEXT_MAX} characters`;

function fieldOf(body: unknown, field: string): unknown {
  return body !== null && typeof body === 'object' && !Array.isArray(body)
    ? (body as Record<string, unknown>)[field]
    : undefined;
}

/** The reaction's emoji: one emoji, or `""` (taken away). */
export function validateEmoji(body: unknown): string {
  const emoji = fieldOf(body, 'emoji');
  if (emoji === '' || (typeof emoji === 'string' && isOneEmoji(emoji))) return emoji;
  throw new ApiError('VALIDATION_FAILED', { errors: { emoji: [EMOJI_RULE] } });
}

/** An edit's new text. */
export function validateEditText(body: unknown): string {
  const text = fieldOf(body, 'text');
  if (typeof text === 'string' && text.trim().length > 0 && [...text].length <= TEXT_MAX) return text;
  throw new ApiError('VALIDATION_FAILED', { errors: { text: [EDIT_TEXT_RULE] } });
}

function paramsOf(row: MessageRow): Record<string, unknown> {
  return JSON.parse(row.params) as Record<string, unknown>;
}

/** The params of a message with its text (chat) or caption (media) replaced. */
export function editedParams(row: MessageRow, text: string): string {
  const params = paramsOf(row);
  return JSON.stringify(row.type === 'chat' ? { ...params, text } : { ...params, caption: text });
}

/** The chat a message is in: its group, or the other person (the receiver of ours, the sender of one received). */
export function chatOf(row: MessageRow): string {
  return row.direction === 'outgoing' ? row.receiver : receivedChat(row);
}

/** The message as an action names it; a received one's `id` is still ours here (the caller puts the network's). */
export function actionTarget(row: MessageRow): QuotedMessage {
  if (row.direction === 'outgoing') return { id: row.id, fromMe: true, chat: row.receiver };
  return { id: row.id, fromMe: false, chat: chatOf(row), author: row.sender ?? row.device_phone };
}

/** What of a message's params is no content: its reply context, and a forwarded copy's marks. */
const NOT_CONTENT = new Set([
  'mentions',
  'quotedMessageId',
  'forwarded',
  'forwarded_from',
  'group_id',
  'quoted',
  'from_lid',
]);

/** The media kinds a message may carry, and the params field that holds their `{url}` (as `POST /messages`). */
const MEDIA_CONTAINER: Readonly<Record<string, string>> = {
  image: 'image',
  video: 'video',
  audio: 'audio',
  file: 'document',
  sticker: 'sticker',
};

/** Whether a message of this type carries media. */
export const isMediaType = (type: string): boolean => Object.hasOwn(MEDIA_CONTAINER, type);

/**
 * The received message whose stored media a forward sends: the message itself when received, or, for a forward of
 * ours that sent received media on, the received message it came from (its URL is the gateway's own, not fetched).
 */
export function receivedMediaSource(row: MessageRow): string | null {
  if (!isMediaType(row.type)) return null;
  if (row.direction === 'incoming') return row.id;
  const from = row.direction === 'outgoing' ? paramsOf(row).forwarded_from : undefined;
  return typeof from === 'string' ? from : null;
}

/** What a forward sends: a `POST /messages` body's type and params, and the received media it sends, if any. */
export interface ForwardContent {
  readonly type: string;
  readonly params: Record<string, unknown>;
  /** Received media sent from the gateway's store (src/media/forwarding.ts); `params` names it by `url`. */
  readonly stored?: ForwardableMedia;
}

/**
 * The `POST /messages` body (without device and receiver) that sends a message's content again. Ours: its type and
 * params as accepted (media fetched again from its URL, unless it was received media sent on: `stored`). Received:
 * a text, location, contact cards, a poll, or media the gateway stored (`stored`, with `url` its own URL of it);
 * anything else is refused.
 */
export function forwardBody(row: MessageRow, stored?: { media: ForwardableMedia; url: string }): ForwardContent {
  if (row.direction === 'outgoing' && row.type !== 'reaction') {
    const params = Object.fromEntries(Object.entries(paramsOf(row)).filter(([key]) => !NOT_CONTENT.has(key)));
    return stored === undefined ? { type: row.type, params } : { type: row.type, params, stored: stored.media };
  }
  if (row.direction !== 'incoming') throw notForwardable(`a ${row.type} is not a message`);
  const params = paramsOf(row);
  switch (row.type) {
    case 'chat':
      if (row.message !== null) return { type: 'chat', params: { text: row.message } };
      break;
    case 'location':
      return { type: 'location', params: { location: params.location } };
    case 'contact':
      return { type: 'contact', params: { contacts: forwardedContacts(params.contacts) } };
    case 'poll':
      return {
        type: 'poll',
        params: { name: params.name, options: params.options, selectable_count: params.selectable_count },
      };
    default:
      if (isMediaType(row.type)) {
        if (stored === undefined) throw notForwardable('its media never reached the gateway');
        return {
          type: row.type,
          params: receivedMediaParams(row, params, stored.url, stored.media),
          stored: stored.media,
        };
      }
  }
  throw notForwardable(
    `a received ${row.type} cannot be sent on: texts, media, locations, contact cards and polls received can`,
  );
}

function notForwardable(error: string): ApiError {
  return new ApiError('MESSAGE_NOT_FORWARDABLE', { error });
}

/** The params of received media sent on: its URL, caption, file name and voice-note mark, as a send names them. */
function receivedMediaParams(
  row: MessageRow,
  params: Record<string, unknown>,
  url: string,
  media: ForwardableMedia,
): Record<string, unknown> {
  const caption = row.type === 'audio' || row.type === 'sticker' ? null : row.message;
  const fileName = media.fileName ?? (typeof params.fileName === 'string' ? params.fileName : 'file');
  return {
    [MEDIA_CONTAINER[row.type]!]: { url },
    ...(caption === null || caption === '' ? {} : { caption }),
    ...(row.type === 'file' ? { fileName } : {}),
    ...(row.type === 'audio' && params.ptt === true ? { ptt: true } : {}),
  };
}

/** Received contact cards as a send takes them: each card's first number (a card with none cannot be sent). */
function forwardedContacts(cards: unknown): Array<{ name: string; phone: string }> {
  const list = Array.isArray(cards) ? (cards as Array<{ name?: unknown; phones?: unknown }>) : [];
  return list.map((card) => {
    const phone = Array.isArray(card.phones) ? card.phones[0] : undefined;
    if (typeof phone !== 'string' || phone === '') {
      throw notForwardable('a contact card received without a phone number cannot be sent on');
    }
    // A card that named no one is sent under its number.
    return { name: typeof card.name === 'string' && card.name.trim() !== '' ? card.name : phone, phone };
  });
}
