/**
 * Ending a device's queue when the sender its messages were accepted for is
 * gone (docs/internals.md, Devices and pairing, 5 and 13): a logout ends the pairing, so the messages
 * queued for that number can never leave from it; a deleted device sends
 * nothing. Each queued message ends `failed` with the reason, its unit of
 * quota comes back (it never reached the network), and, for a logout,
 * `message.failed` is recorded for the device's webhook.
 *
 * Work is done in batches of QUEUE_END_BATCH: the first inside the caller's
 * transaction (the state change and the end of its queue commit together),
 * the rest each in a transaction of its own, so a long queue never holds the
 * store's write lock or the event loop for long. If the process stops between
 * batches, the dispatcher's send-time guard fails what is left with the same
 * reason before anything of it could be sent.
 *
 * Must never: fail a message that is not `pending` (one the network took keeps
 * its outcome), or send anything.
 */
import type { Kysely } from 'kysely';
import type { Clock } from '../clock.js';
import { recordEvent, type EventDevice } from '../events/record.js';
import type { Database, Db } from '../store/schema.js';
import { presentMessage } from './present.js';
import { messagesRepository } from './repository.js';

export const QUEUE_END_BATCH = 500;

/** `failed_reason` of a message queued for a pairing that a logout ended. */
export const REASON_LOGGED_OUT = 'device logged out';
/** `failed_reason` of a message queued on a device that was deleted. */
export const REASON_DELETED = 'device deleted';

export interface QueueEnd {
  /** The device as its events name it (the phone of the pairing that ended). */
  readonly device: EventDevice;
  readonly reason: string;
  /** Record `message.failed` for each (a deleted device has nowhere to deliver it). */
  readonly announce: boolean;
}

/** Fails one batch of the device's queue in `db` (a transaction). Answers how many ended. */
export async function endQueueBatch(db: Db, end: QueueEnd, now: number): Promise<number> {
  const failed = await messagesRepository.failQueued(db, end.device.id, end.reason, now, QUEUE_END_BATCH);
  if (end.announce) {
    for (const row of failed) {
      // A queued action (actions.ts) is no message: it ends silently.
      if (row.direction !== 'action') await recordEvent(db, end.device, 'message.failed', presentMessage(row), now);
    }
  }
  return failed.length;
}

/**
 * Fails what is left after the first batch, a transaction per batch. Answers
 * the number ended here (the caller adds its first batch).
 */
export async function endQueueRest(db: Kysely<Database>, end: QueueEnd, clock: Clock): Promise<number> {
  let total = 0;
  for (;;) {
    const ended = await db.transaction().execute((trx) => endQueueBatch(trx, end, clock.now()));
    total += ended;
    if (ended < QUEUE_END_BATCH) return total;
  }
}
