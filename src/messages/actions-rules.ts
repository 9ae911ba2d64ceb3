/**
 * The pure rules of message actions (actions.ts): what a reaction's and an edit's body must be, the params of an
 * edited message, the chat and network target of a stored message, and the send body that forwards one.
 *
 * Owns: those rules and their 400s (the contract's envelope, the field named).
 * Must never: do I/O, or throw anything but an ApiError.
 */
import { ApiError } from '../errors.js';
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
  if (row.direction === 'outgoing') return row.receiver;
  const group = paramsOf(row).group_id;
  return typeof group === 'string' ? group : (row.sender ?? row.device_phone);
}

/** The message as an action names it; a received one's `id` is still ours here (the caller puts the network's). */
export function actionTarget(row: MessageRow): QuotedMessage {
  if (row.direction === 'outgoing') return { id: row.id, fromMe: true, chat: row.receiver };
  return { id: row.id, fromMe: false, chat: chatOf(row), author: row.sender ?? row.device_phone };
}

/** What of a message's params is no content: its reply context, and a forwarded copy's mark. */
const NOT_CONTENT = new Set(['mentions', 'quotedMessageId', 'forwarded', 'group_id', 'quoted', 'from_lid']);

/**
 * The `POST /messages` body (without device and receiver) that sends a message's content again. Ours: its type and
 * params as accepted (media fetched again from its URL). Received: its text; media received is not kept by the
 * gateway yet, so it cannot be forwarded.
 */
export function forwardBody(row: MessageRow): { type: string; params: Record<string, unknown> } {
  if (row.direction === 'outgoing' && row.type !== 'reaction') {
    const params = Object.fromEntries(Object.entries(paramsOf(row)).filter(([key]) => !NOT_CONTENT.has(key)));
    return { type: row.type, params };
  }
  if (row.direction === 'incoming' && row.type === 'chat' && row.message !== null) {
    return { type: 'chat', params: { text: row.message } };
  }
  throw new ApiError('MESSAGE_NOT_FORWARDABLE', {
    error: 'only messages of ours and texts received can be forwarded (received media is not kept by the gateway)',
  });
}
