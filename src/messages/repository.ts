/**
 * SQL for messages, their media and idempotency keys.
 *
 * Owns: the `messages`, `message_media` and `idempotency_keys` tables, and
 * the quota counter's atomic take and give-back on `devices`.
 * Must never: decide a rule; that is the service's and the dispatcher's.
 */
import type { Kysely, Selectable, Transaction } from 'kysely';
import type { Database, MessagesTable } from '../store/schema.js';

type Db = Kysely<Database> | Transaction<Database>;
export type MessageRow = Selectable<MessagesTable>;

export const messagesRepository = {
  /** Takes one unit of quota if any is left; false when none is. Exact under concurrency (one atomic UPDATE). */
  takeQuota: async (db: Db, deviceId: number): Promise<boolean> => {
    const result = await db
      .updateTable('devices')
      .set((eb) => ({ quote_used: eb('quote_used', '+', 1) }))
      .where('id', '=', deviceId)
      .where((eb) => eb.or([eb('quota_limit', '<', 0), eb('quote_used', '<', eb.ref('quota_limit'))]))
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  },

  giveBackQuota: async (db: Db, deviceId: number): Promise<void> => {
    await db
      .updateTable('devices')
      .set((eb) => ({ quote_used: eb('quote_used', '-', 1) }))
      .where('id', '=', deviceId)
      .where('quote_used', '>', 0)
      .execute();
  },

  insert: (db: Db, row: Omit<MessageRow, 'seq'>): Promise<MessageRow> =>
    db.insertInto('messages').values(row).returningAll().executeTakeFirstOrThrow(),

  insertMedia: async (db: Db, messageId: string, mimetype: string, bytes: Uint8Array): Promise<void> => {
    await db.insertInto('message_media').values({ message_id: messageId, mimetype, bytes }).execute();
  },

  media: (db: Db, messageId: string) =>
    db.selectFrom('message_media').select(['mimetype', 'bytes']).where('message_id', '=', messageId).executeTakeFirst(),

  deleteMedia: async (db: Db, messageId: string): Promise<void> => {
    await db.deleteFrom('message_media').where('message_id', '=', messageId).execute();
  },

  find: (db: Db, accountId: number, id: string): Promise<MessageRow | undefined> =>
    db.selectFrom('messages').selectAll().where('id', '=', id).where('account_id', '=', accountId).executeTakeFirst(),

  list: (
    db: Db,
    accountId: number,
    filter: { deviceId?: number; status?: string; direction?: string; beforeSeq?: number; limit: number },
  ): Promise<MessageRow[]> => {
    let query = db.selectFrom('messages').selectAll().where('account_id', '=', accountId);
    if (filter.deviceId !== undefined) query = query.where('device_id', '=', filter.deviceId);
    if (filter.status !== undefined) query = query.where('status', '=', filter.status);
    if (filter.direction !== undefined) query = query.where('direction', '=', filter.direction);
    if (filter.beforeSeq !== undefined) query = query.where('seq', '<', filter.beforeSeq);
    return query.orderBy('seq', 'desc').limit(filter.limit).execute();
  },

  /** The next messages a device should send, in acceptance order. */
  pendingAfter: (db: Db, deviceId: number, afterSeq: number, limit: number): Promise<MessageRow[]> =>
    db
      .selectFrom('messages')
      .selectAll()
      .where('device_id', '=', deviceId)
      .where('status', '=', 'pending')
      .where('seq', '>', afterSeq)
      .orderBy('seq')
      .limit(limit)
      .execute(),

  claimIdempotencyKey: async (
    db: Db,
    accountId: number,
    key: string,
    requestHash: string,
    now: number,
    expiredBefore: number,
  ): Promise<{ claimed: true } | { claimed: false; requestHash: string; response: string }> => {
    const existing = await db
      .selectFrom('idempotency_keys')
      .select(['request_hash', 'response', 'created_at'])
      .where('account_id', '=', accountId)
      .where('key', '=', key)
      .executeTakeFirst();
    if (existing !== undefined && existing.created_at >= expiredBefore) {
      return { claimed: false, requestHash: existing.request_hash, response: existing.response };
    }
    if (existing !== undefined) {
      await db.deleteFrom('idempotency_keys').where('account_id', '=', accountId).where('key', '=', key).execute();
    }
    await db
      .insertInto('idempotency_keys')
      .values({ account_id: accountId, key, request_hash: requestHash, response: '', created_at: now })
      .execute();
    return { claimed: true };
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
