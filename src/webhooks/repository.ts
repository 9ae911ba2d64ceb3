/**
 * SQL for account webhooks (docs/webhooks.md, Several webhooks): the `webhooks` rows of an account, and
 * removing a deleted webhook's deliveries with their attempts.
 *
 * Owns: the `webhooks` table. The deliveries themselves are the events feature's (`webhook_events`,
 * events/repository.ts); only a webhook's deletion removes its own here, in the same transaction.
 * Must never: decide a rule (limits, what a filter may name, who may see what): the service decides and
 * passes values in; never answer another account's webhook.
 */
import type { Insertable, Selectable, Updateable } from 'kysely';
import type { Db, WebhooksTable } from '../store/schema.js';

export type WebhookRow = Selectable<WebhooksTable>;
export type WebhookChanges = Omit<Updateable<WebhooksTable>, 'id' | 'account_id' | 'created_at'>;

/** Deliveries (and their attempts) one statement of a deletion removes at most. */
const DELETE_CHUNK = 500;

export const webhooksRepository = {
  count: async (db: Db, accountId: number): Promise<number> => {
    const row = await db
      .selectFrom('webhooks')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('account_id', '=', accountId)
      .executeTakeFirst();
    return Number(row?.n ?? 0);
  },

  insert: async (db: Db, row: Insertable<WebhooksTable>): Promise<WebhookRow> =>
    db.insertInto('webhooks').values(row).returningAll().executeTakeFirstOrThrow(),

  list: (db: Db, accountId: number): Promise<WebhookRow[]> =>
    db
      .selectFrom('webhooks')
      .selectAll()
      .where('account_id', '=', accountId)
      .orderBy('created_at')
      .orderBy('id')
      .execute(),

  find: (db: Db, accountId: number, id: string): Promise<WebhookRow | undefined> =>
    db.selectFrom('webhooks').selectAll().where('id', '=', id).where('account_id', '=', accountId).executeTakeFirst(),

  update: (db: Db, accountId: number, id: string, changes: WebhookChanges): Promise<WebhookRow | undefined> =>
    db
      .updateTable('webhooks')
      .set(changes)
      .where('id', '=', id)
      .where('account_id', '=', accountId)
      .returningAll()
      .executeTakeFirst(),

  /** Deletes the webhook; false when the account has no such webhook. Its deliveries go with `deleteDeliveries`. */
  delete: async (db: Db, accountId: number, id: string): Promise<boolean> => {
    const rows = await db
      .deleteFrom('webhooks')
      .where('id', '=', id)
      .where('account_id', '=', accountId)
      .returning('id')
      .execute();
    return rows.length > 0;
  },

  /** Removes up to DELETE_CHUNK deliveries of a deleted webhook with their attempts; answers how many. */
  deleteDeliveries: async (db: Db, webhookId: string): Promise<number> => {
    const ids = (
      await db
        .selectFrom('webhook_events')
        .select('id')
        .where('webhook_id', '=', webhookId)
        .limit(DELETE_CHUNK)
        .execute()
    ).map((row) => row.id);
    if (ids.length === 0) return 0;
    await db.deleteFrom('webhook_attempts').where('event_id', 'in', ids).execute();
    await db.deleteFrom('webhook_events').where('id', 'in', ids).execute();
    return ids.length;
  },

  /** Devices of the account among `ids` (not deleted): a filter may name only those. */
  ownDevices: async (db: Db, accountId: number, ids: readonly number[]): Promise<Set<number>> => {
    if (ids.length === 0) return new Set();
    const rows = await db
      .selectFrom('devices')
      .select('id')
      .where('account_id', '=', accountId)
      .where('deleted_at', 'is', null)
      .where('id', 'in', ids)
      .execute();
    return new Set(rows.map((row) => Number(row.id)));
  },
};
