/**
 * Changes phones make to messages after they were sent (issue 26; docs/webhooks.md, Reactions, edits and
 * deletes): a reaction, an edit by the author, a delete for everyone.
 *
 * Owns: finding the message a network's `message_changed` names (one this device sent, by our id; one it received,
 * by the network's id), recording the change on it (`message_reactions`, or the new text and `edited_at`, or
 * `deleted_at`) and its event (`message.reaction`, `message.edited`, `message.deleted`) in the same transaction.
 * Called by incoming.ts for the changes that pass the device's inbox, so a change is written after every message
 * heard before it (the one it concerns too) and with the same outage rules.
 * A change to a message the gateway does not have (never stored, or gone by retention), an edit by anyone but the
 * author, or a delete by someone else outside a group is dropped with a debug log: there is no message of ours to
 * name. A change that changes nothing (the same reaction again, a repeated delete or edit) is not announced again.
 * Must never: drop a message's content on delete, or announce a change that was not stored.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Transaction } from 'kysely';
import type { DeviceRow } from '../devices/repository.js';
import { incomingIdsRepository } from '../messages/incoming-ids-repository.js';
import { reactionsRepository } from '../messages/reactions.js';
import type { MessageRow } from '../messages/repository.js';
import type { NetworkEvent } from '../network/network.js';
import type { Database } from '../store/schema.js';
import { recordEvent } from './record.js';

export type MessageChangedEvent = Extract<NetworkEvent, { type: 'message_changed' }>;

/** Types whose text lives in `params.text`; the others (media) keep it as `params.caption`. */
const TEXT_IN_PARAMS = new Set(['chat']);

/** Whether the one who made the change wrote the message (by number, or by LID while no number is known). */
function byAuthor(row: MessageRow, event: MessageChangedEvent): boolean {
  if (row.direction !== 'incoming' || row.sender === null) return false;
  if (row.sender === event.from) return true;
  const stored = (JSON.parse(row.params) as { from_lid?: unknown }).from_lid;
  return event.fromLid !== undefined && (row.sender === event.fromLid || stored === event.fromLid);
}

/** Whether the message was posted in a group (there an admin may delete anyone's message for everyone). */
function inGroup(row: MessageRow): boolean {
  if (row.direction === 'outgoing') return row.receiver.endsWith('@g.us');
  return typeof (JSON.parse(row.params) as { group_id?: unknown }).group_id === 'string';
}

/** The message's params with its text replaced: `text` for a chat, `caption` for media. */
function editedParams(row: MessageRow, text: string): string {
  const params = JSON.parse(row.params) as Record<string, unknown>;
  return JSON.stringify({ ...params, [TEXT_IN_PARAMS.has(row.type) ? 'text' : 'caption']: text });
}

/** Records one change and its event; false when nothing was recorded (dropped, or it changed nothing). */
export async function recordMessageChange(
  trx: Transaction<Database>,
  device: DeviceRow,
  event: MessageChangedEvent,
  now: number,
  logger: FastifyBaseLogger,
): Promise<boolean> {
  const row = await incomingIdsRepository.findTarget(trx, device.id, event.target);
  const dropped = (why: string) => {
    logger.debug(
      { deviceId: device.id, target: event.target, change: event.change.kind, from: event.from },
      `message change dropped: ${why}`,
    );
    return false;
  };
  if (row === undefined) return dropped('the gateway does not have the message');
  const change = event.change;
  switch (change.kind) {
    case 'reaction': {
      const changed = await reactionsRepository.react(trx, row.id, event.from, change.emoji, now);
      if (!changed) return false;
      const data = { message_id: row.id, from: event.from, emoji: change.emoji };
      await recordEvent(trx, device, 'message.reaction', data, now);
      return true;
    }
    case 'edited': {
      if (!byAuthor(row, event)) return dropped('only its author edits a message');
      if (row.edited_at !== null && row.message === change.text) return false;
      await trx
        .updateTable('messages')
        .set({ message: change.text, params: editedParams(row, change.text), edited_at: now })
        .where('id', '=', row.id)
        .execute();
      await recordEvent(trx, device, 'message.edited', { message_id: row.id, text: change.text }, now);
      return true;
    }
    case 'deleted': {
      if (!byAuthor(row, event) && !inGroup(row)) return dropped('only its author deletes a message outside groups');
      if (row.deleted_at !== null) return false;
      await trx.updateTable('messages').set({ deleted_at: now }).where('id', '=', row.id).execute();
      await recordEvent(trx, device, 'message.deleted', { message_id: row.id }, now);
      return true;
    }
  }
}
