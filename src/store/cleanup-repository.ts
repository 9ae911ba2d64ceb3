/**
 * SQL that removes or ends stored records in bulk: retention (docs/internals.md, Retention)
 * and what deleting a device stops.
 *
 * Owns: batched deletes of ended webhook deliveries with their attempts, of old
 * events of the log and of expired idempotency keys; ending a device's pending webhook deliveries.
 * Each delete takes at most `limit` rows (found through an index) so a batch
 * is short whatever the backlog. Old messages are deleted by the messages
 * feature (src/messages/retention-repository.ts), which knows what hangs off one.
 * Must never: import a feature (the store is the floor), decide what is old
 * (callers pass the cut-off), or touch a delivery still pending through retention.
 */
import type { Db } from './schema.js';

export const cleanupRepository = {
  /** A deleted device's deliveries that have not ended are ended now (`failed`): there is no one to deliver to. */
  stopPendingDeliveries: async (db: Db, deviceId: number, now: number): Promise<number> => {
    const rows = await db
      .updateTable('webhook_events')
      .set({ status: 'failed', failed_at: now, locked_until: null, retry_requested: 0 })
      .where('device_id', '=', deviceId)
      .where('status', '=', 'pending')
      .returning('id')
      .execute();
    return rows.length;
  },

  /** Deletes up to `limit` deliveries that ended (delivered, failed or skipped) before `before`, with their attempts. */
  deleteEndedDeliveries: async (db: Db, before: number, limit: number): Promise<number> => {
    const delivered = await db
      .selectFrom('webhook_events')
      .select('id')
      .where('status', '=', 'delivered')
      .where('delivered_at', '<', before)
      .limit(limit)
      .execute();
    const failed = await db
      .selectFrom('webhook_events')
      .select('id')
      .where('status', '=', 'failed')
      .where('failed_at', '<', before)
      .limit(Math.max(0, limit - delivered.length))
      .execute();
    // A skipped delivery (its format has no body for the type) ends when first due, moments after it was made.
    const skipped = await db
      .selectFrom('webhook_events')
      .select('id')
      .where('status', '=', 'skipped')
      .where('created_at', '<', before)
      .limit(Math.max(0, limit - delivered.length - failed.length))
      .execute();
    const ids = [...delivered, ...failed, ...skipped].map((row) => row.id);
    if (ids.length === 0) return 0;
    // The status is checked again: a manual retry may have made one pending meanwhile (it keeps its attempts).
    const deleted = await db
      .deleteFrom('webhook_events')
      .where('id', 'in', ids)
      .where('status', 'in', ['delivered', 'failed', 'skipped'])
      .returning('id')
      .execute();
    if (deleted.length === 0) return 0;
    await db
      .deleteFrom('webhook_attempts')
      .where(
        'event_id',
        'in',
        deleted.map((row) => row.id),
      )
      .execute();
    return deleted.length;
  },

  /**
   * Deletes up to `limit` events of the log recorded before `before`, from the front of the log order (the events
   * index walked from its start): it stops at the first event that is not old yet, so a batch never scans the log.
   */
  deleteOldEvents: async (db: Db, before: number, limit: number): Promise<number> => {
    const oldest = await db
      .selectFrom('events')
      .select(['seq', 'created_at'])
      .orderBy('xact')
      .orderBy('seq')
      .limit(limit)
      .execute();
    const seqs: number[] = [];
    for (const row of oldest) {
      if (Number(row.created_at) >= before) break;
      seqs.push(Number(row.seq));
    }
    if (seqs.length === 0) return 0;
    const deleted = await db.deleteFrom('events').where('seq', 'in', seqs).executeTakeFirst();
    return Number(deleted.numDeletedRows);
  },

  /** Deletes up to `limit` idempotency keys created before `before`. */
  deleteIdempotencyKeys: async (db: Db, before: number, limit: number): Promise<number> => {
    const deleted = await db
      .deleteFrom('idempotency_keys')
      .where((eb) =>
        eb(
          eb.refTuple('account_id', 'key'),
          'in',
          eb
            .selectFrom('idempotency_keys as expired')
            .select(['expired.account_id', 'expired.key'])
            .where('expired.created_at', '<', before)
            .limit(limit)
            .$asTuple('account_id', 'key'),
        ),
      )
      .where('created_at', '<', before)
      .executeTakeFirst();
    return Number(deleted.numDeletedRows);
  },
};
