/**
 * SQL for account webhooks (docs/webhooks.md, Several webhooks): the `webhooks` rows of an account, and
 * ending a deleted webhook's waiting deliveries.
 *
 * Owns: the `webhooks` table. The deliveries themselves are the events feature's (`webhook_events`,
 * events/repository.ts); only a webhook's deletion ends its waiting ones here, in the same transaction.
 * Must never: decide a rule (limits, what a filter may name, who may see what): the service decides and
 * passes values in; never answer another account's webhook.
 */
import type { Insertable, Selectable, Updateable } from 'kysely';
import type { Db, WebhooksTable } from '../store/schema.js';

export type WebhookRow = Selectable<WebhooksTable>;
export type WebhookChanges = Omit<Updateable<WebhooksTable>, 'id' | 'account_id' | 'created_at'>;

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

  /**
   * Ends a deleted webhook's waiting deliveries (`failed`): nobody is to deliver them to. Their rows and attempts
   * are deleted by retention with every other ended delivery; an attempt under way records its outcome as usual.
   */
  stopDeliveries: async (db: Db, webhookId: string, now: number): Promise<number> => {
    const result = await db
      .updateTable('webhook_events')
      .set({ status: 'failed', failed_at: now, locked_until: null, retry_requested: 0 })
      .where('webhook_id', '=', webhookId)
      .where('status', '=', 'pending')
      .executeTakeFirst();
    return Number(result.numUpdatedRows);
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
