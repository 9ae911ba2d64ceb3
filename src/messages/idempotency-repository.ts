/**
 * SQL for `idempotency_keys`: a client's `Idempotency-Key` on a send, the request it was first used with and the
 * answer given to it.
 *
 * Owns: that table, and taking a key exactly once under concurrency (two processes on PostgreSQL).
 * Must never: decide how long a key lives or what a reused key answers (the service does).
 */
import type { Db } from '../store/schema.js';

export const idempotencyRepository = {
  findIdempotencyKey: (db: Db, accountId: number, key: string) =>
    db
      .selectFrom('idempotency_keys')
      .select(['request_hash', 'response', 'created_at'])
      .where('account_id', '=', accountId)
      .where('key', '=', key)
      .executeTakeFirst(),

  releaseIdempotencyKey: async (db: Db, accountId: number, key: string): Promise<void> => {
    await db.deleteFrom('idempotency_keys').where('account_id', '=', accountId).where('key', '=', key).execute();
  },

  /** Takes the key for this request, or tells what the live earlier request with it stored. */
  claimIdempotencyKey: async (
    db: Db,
    accountId: number,
    key: string,
    requestHash: string,
    now: number,
    expiredBefore: number,
  ): Promise<{ claimed: true } | { claimed: false; requestHash: string; response: string }> => {
    const existing = await idempotencyRepository.findIdempotencyKey(db, accountId, key);
    if (existing !== undefined && existing.created_at >= expiredBefore) {
      return { claimed: false, requestHash: existing.request_hash, response: existing.response };
    }
    if (existing !== undefined) await idempotencyRepository.releaseIdempotencyKey(db, accountId, key);
    // Another process may claim the same key at the same moment (PostgreSQL): its insert holds ours until it
    // commits; then ours does nothing and the row it committed is read, as it would have been had it come first.
    const inserted = await db
      .insertInto('idempotency_keys')
      .values({ account_id: accountId, key, request_hash: requestHash, response: '', created_at: now })
      .onConflict((conflict) => conflict.columns(['account_id', 'key']).doNothing())
      .returning('key')
      .executeTakeFirst();
    if (inserted !== undefined) return { claimed: true };
    const winner = await idempotencyRepository.findIdempotencyKey(db, accountId, key);
    // Taken and given back again (its request was refused for quota): nobody holds it now; the caller answers "in use".
    if (winner === undefined) return { claimed: false, requestHash, response: '' };
    return { claimed: false, requestHash: winner.request_hash, response: winner.response };
  },

  saveIdempotentResponse: async (db: Db, accountId: number, key: string, response: string): Promise<void> => {
    await db
      .updateTable('idempotency_keys')
      .set({ response })
      .where('account_id', '=', accountId)
      .where('key', '=', key)
      .execute();
  },
};
