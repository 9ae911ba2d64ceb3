/**
 * The row a device's queue gets for something to send: an accepted message (acceptance.ts) or a message action
 * (actions.ts). Both are the device's next in order, `pending`, due now, never tried, with nothing sent, delivered,
 * read, failed, edited, deleted or claimed yet.
 *
 * Owns: that starting state of a queue row, and drawing its id (a ULID of `now`, so ids drawn in order sort as the
 * queue does).
 * Must never: decide what is sent (the callers give the content) or write the row.
 */
import { newUlid } from '../ids.js';
import type { MessageRow } from './repository.js';

/** What the caller decides of a queue row: who sends what to whom. */
export type QueuedContent = Pick<
  MessageRow,
  | 'account_id'
  | 'device_id'
  | 'direction'
  | 'type'
  | 'device_phone'
  | 'receiver'
  | 'message'
  | 'file_url'
  | 'params'
  | 'simulate_typing'
  | 'quoted'
>;

export function pendingQueueRow(content: QueuedContent, now: number): Omit<MessageRow, 'seq'> {
  return {
    id: newUlid(now),
    ...content,
    sender: null,
    status: 'pending',
    failed_reason: null,
    attempts: 0,
    next_attempt_at: now,
    created_at: now,
    sent_at: null,
    delivered_at: null,
    read_at: null,
    failed_at: null,
    rendered_as: null,
    edited_at: null,
    deleted_at: null,
    claimed_at: null,
    // An outgoing message is in the chat of its receiver; an action's row is in none (src/chats/chat-key.ts).
    chat: content.direction === 'outgoing' ? content.receiver : null,
  };
}
