/**
 * SQL for the delivery logs (docs/webhooks.md, The delivery log; Several webhooks): a device's own
 * webhook_url's deliveries and an account webhook's, with their attempts, and a manual retry.
 *
 * Owns: reading `webhook_events` rows by scope (a device's own URL, or one account webhook) for the API,
 * their `webhook_attempts`, and making one due now.
 * Must never: decide a rule (who may see what, what a retry means): the services decide and pass values
 * in; never answer a row outside the scope and account given.
 */
import type { ExpressionBuilder, Selectable } from 'kysely';
import type { Database, Db, WebhookAttemptsTable, WebhookEventsTable } from '../store/schema.js';

export type EventRow = Selectable<WebhookEventsTable>;
export type AttemptRow = Selectable<WebhookAttemptsTable>;

/** Whose deliveries: a device's own webhook_url's, or one account webhook's. */
export type DeliveryScope = { readonly deviceId: number } | { readonly webhookId: string };

/** The rows of a scope (a receiver's, for pauses; a log's, for the API). */
export function inScope(eb: ExpressionBuilder<Database, 'webhook_events'>, scope: DeliveryScope) {
  return 'deviceId' in scope
    ? eb.and([eb('device_id', '=', scope.deviceId), eb('webhook_id', 'is', null)])
    : eb('webhook_id', '=', scope.webhookId);
}

export const deliveryLogRepository = {
  page: (
    db: Db,
    accountId: number,
    scope: DeliveryScope,
    filter: { status?: string; type?: string; limit: number; offset: number },
  ): Promise<EventRow[]> => {
    let query = db
      .selectFrom('webhook_events')
      .selectAll()
      .where((eb) => inScope(eb, scope))
      .where('account_id', '=', accountId);
    if (filter.status !== undefined) query = query.where('status', '=', filter.status);
    if (filter.type !== undefined) query = query.where('type', '=', filter.type);
    return query
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(filter.limit)
      .offset(filter.offset)
      .execute();
  },

  count: async (
    db: Db,
    accountId: number,
    scope: DeliveryScope,
    filter: { status?: string; type?: string },
  ): Promise<number> => {
    let query = db
      .selectFrom('webhook_events')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where((eb) => inScope(eb, scope))
      .where('account_id', '=', accountId);
    if (filter.status !== undefined) query = query.where('status', '=', filter.status);
    if (filter.type !== undefined) query = query.where('type', '=', filter.type);
    const row = await query.executeTakeFirst();
    return Number(row?.n ?? 0);
  },

  find: (db: Db, accountId: number, scope: DeliveryScope, id: string): Promise<EventRow | undefined> =>
    db
      .selectFrom('webhook_events')
      .selectAll()
      .where('id', '=', id)
      .where((eb) => inScope(eb, scope))
      .where('account_id', '=', accountId)
      .executeTakeFirst(),

  attemptsOf: (db: Db, eventIds: readonly string[]): Promise<AttemptRow[]> =>
    eventIds.length === 0
      ? Promise.resolve([])
      : db
          .selectFrom('webhook_attempts')
          .selectAll()
          .where('event_id', 'in', eventIds)
          .orderBy('attempted_at')
          .orderBy('id')
          .execute(),

  /**
   * A manual retry: the delivery becomes `pending`, due now, whatever its state (a failed one too). If an
   * attempt is in flight (leased), it keeps its lease (and the lease's end as its due time) and is neither
   * interrupted nor sent twice at once: the row is marked `retry_requested`, and the attempt's outcome sends
   * it back here.
   */
  dueNow: (db: Db, accountId: number, scope: DeliveryScope, id: string, now: number): Promise<EventRow | undefined> =>
    db
      .updateTable('webhook_events')
      .set((eb) => {
        const inFlight = eb('locked_until', '>', now);
        return {
          status: 'pending',
          failed_at: null,
          next_attempt_at: eb.case().when(inFlight).then(eb.ref('next_attempt_at')).else(now).end(),
          retry_requested: eb.case().when(inFlight).then(1).else(0).end(),
        };
      })
      .where('id', '=', id)
      .where((eb) => inScope(eb, scope))
      .where('account_id', '=', accountId)
      .returningAll()
      .executeTakeFirst(),
};
