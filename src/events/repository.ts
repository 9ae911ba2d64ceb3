/**
 * SQL for webhook deliveries: claiming due events, writing attempt outcomes,
 * moving a paused receiver's backlog, and the ids of incoming messages (the
 * delivery logs and manual retries are delivery-log-repository.ts).
 *
 * Owns: the `webhook_events` rows after they are recorded (record.ts inserts
 * them), `webhook_attempts` and `incoming_message_ids`.
 * Must never: decide a rule (when to retry, when to give up, what a device
 * may see); the deliverer and the service decide and pass values in.
 */
import { sql, type ExpressionBuilder } from 'kysely';
import { onPostgres } from '../store/dialect.js';
import { compiled, prepared } from '../store/prepared.js';
import type { Database, Db } from '../store/schema.js';
import { inScope, type DeliveryScope } from './delivery-log-repository.js';
import { claimDue, type ClaimParams, type ClaimedEvent } from './claim-repository.js';
import { paddedLists, pow2Chunks } from './sql-lists.js';

export type { AttemptRow, DeliveryScope, EventRow } from './delivery-log-repository.js';
export type { ClaimParams, ClaimedEvent } from './claim-repository.js';

export interface AttemptRecord {
  readonly attempted_at: number;
  readonly http_status: number | null;
  readonly latency_ms: number;
  readonly error: string | null;
  readonly url: string | null;
  /** The webhook format the attempt was sent in (null: none was sent). */
  readonly format: string | null;
  /** Reply by response: what the answer asked for and what came of it (JSON), or null. */
  readonly reply: string | null;
}

/** How one claimed event's lease ends. */
export type Completion =
  | { readonly id: string; readonly attempt: AttemptRecord; readonly outcome: 'delivered' | 'failed' }
  /** The device's webhook format has no body for the event's type: it ends without a request. */
  | { readonly id: string; readonly attempt: AttemptRecord; readonly outcome: 'skipped' }
  | { readonly id: string; readonly attempt: AttemptRecord; readonly outcome: 'retry'; readonly retryAt: number }
  /** Handed back unattempted (shutdown): due again at once, no attempt counted. */
  | { readonly id: string; readonly outcome: 'released' };

/**
 * A batch's ids as the lists its statements take: on PostgreSQL one array parameter (`= any($1)`), whatever the size;
 * on SQLite padded `in` lists (paddedLists).
 */
function idLists(db: Db, ids: readonly string[]): string[][] {
  if (!onPostgres(db)) return paddedLists(ids);
  return ids.length === 0 ? [] : [[...ids]];
}

function idIn(db: Db, list: readonly string[]) {
  return (eb: ExpressionBuilder<Database, 'webhook_events'>) =>
    onPostgres(db) ? eb('id', '=', eb.fn.any(eb.val(list))) : eb('id', 'in', list);
}

/**
 * A time as a bound parameter typed bigint: PostgreSQL reads an untyped parameter in a CASE as text. (Written into
 * the SQL instead, each value made a statement text of its own, planned afresh and never reused.)
 */
function millis(eb: ExpressionBuilder<Database, 'webhook_events'>, ms: number) {
  return eb.cast<number>(eb.val(ms), 'bigint');
}

/** Attempts written with one array per column on PostgreSQL: one statement (and one round trip) for any batch. */
const insertAttemptsPostgres = prepared(
  8,
  (
    db,
    eventIds: readonly string[],
    attemptedAt: readonly number[],
    httpStatus: readonly (number | null)[],
    latencyMs: readonly number[],
    error: readonly (string | null)[],
    url: readonly (string | null)[],
    format: readonly (string | null)[],
    reply: readonly (string | null)[],
  ) =>
    compiled(
      db,
      sql`insert into webhook_attempts (event_id, attempted_at, http_status, latency_ms, error, url, format, reply)
        select * from unnest(${eventIds}::text[], ${attemptedAt}::bigint[], ${httpStatus}::integer[],
          ${latencyMs}::integer[], ${error}::text[], ${url}::text[], ${format}::text[], ${reply}::text[])`,
    ),
);

async function insertAttempts(db: Db, attempts: ReadonlyArray<AttemptRecord & { readonly event_id: string }>) {
  if (attempts.length === 0) return;
  if (!onPostgres(db)) {
    for (const chunk of pow2Chunks(attempts)) await db.insertInto('webhook_attempts').values(chunk).execute();
    return;
  }
  await insertAttemptsPostgres(
    db,
    attempts.map((a) => a.event_id),
    attempts.map((a) => a.attempted_at),
    attempts.map((a) => a.http_status),
    attempts.map((a) => a.latency_ms),
    attempts.map((a) => a.error),
    attempts.map((a) => a.url),
    attempts.map((a) => a.format),
    attempts.map((a) => a.reply),
  );
}

export const eventsRepository = {
  /**
   * Leases due events in one statement. A lane is a device and one destination (its own webhook_url, or
   * one account webhook): lanes already at `perDevice` leases are left out before any of their rows is read
   * (so a dead receiver's backlog cannot fill the claim, nor hold the slots of the device's other destinations),
   * and each other lane gives only as many of its due rows as it has slots left.
   * The lease moves `next_attempt_at` to its end too: rows in flight drop out
   * of the due range (a lane's head is work it can take), and a lease left
   * by a dead process comes due by itself when it runs out.
   */
  claim: async (db: Db, p: ClaimParams): Promise<ClaimedEvent[]> => {
    const rows = await claimDue(db, p);
    return rows.map((row) => ({
      ...row,
      account_id: Number(row.account_id),
      device_id: Number(row.device_id),
      attempts: Number(row.attempts),
      created_at: Number(row.created_at),
      webhook_id: row.webhook_id ?? null,
    }));
  },

  /** How each account webhook of a claim delivers now (read per attempt: URL, secret and headers may change). */
  webhookTargets: async (db: Db, webhookIds: readonly string[]) => {
    const rows = [];
    for (const list of paddedLists(webhookIds)) {
      rows.push(
        ...(await db
          .selectFrom('webhooks')
          .select([
            'id',
            'account_id',
            'url',
            'format',
            'headers',
            'enabled',
            'secret',
            'secret_previous',
            'secret_previous_until',
          ])
          .where('id', 'in', list)
          .execute()),
      );
    }
    return rows;
  },

  /** Where and how each device's deliveries go now (URL and secret are read per attempt: both may change). */
  targets: async (db: Db, deviceIds: readonly number[]) => {
    const rows = [];
    for (const list of paddedLists(deviceIds)) {
      rows.push(
        ...(await db
          .selectFrom('devices')
          .select([
            'id',
            'account_id',
            'webhook_url',
            'webhook_secret',
            'webhook_secret_previous',
            'webhook_secret_previous_until',
            'webhook_format',
            'webhook_reply',
          ])
          .where('id', 'in', list)
          .execute()),
      );
    }
    return rows;
  },

  /**
   * Writes attempt outcomes; set-based for the common cases so a batch costs a
   * few statements. A row whose manual retry was asked for while its attempt
   * was in flight (`retry_requested`) keeps the attempt in its log but goes
   * back to `pending`, due now, whatever the outcome. Answers the ids that did
   * so, for the caller to look for due work again.
   */
  complete: async (db: Db, items: readonly Completion[], now: number): Promise<Set<string>> => {
    const attempts = items.flatMap((item) =>
      item.outcome === 'released' ? [] : [{ event_id: item.id, ...item.attempt }],
    );
    await insertAttempts(db, attempts);

    const requeued = new Set<string>();
    const asked = (eb: ExpressionBuilder<Database, 'webhook_events'>) => eb('retry_requested', '=', 1);
    const ids = (outcome: Completion['outcome']) => items.filter((i) => i.outcome === outcome).map((i) => i.id);
    // A final outcome, unless a retry was asked for meanwhile: then pending, due now.
    for (const final of ['delivered', 'failed'] as const) {
      for (const chunk of idLists(db, ids(final))) {
        const rows = await db
          .updateTable('webhook_events')
          .set((eb) => ({
            status: eb.case().when(asked(eb)).then('pending').else(final).end(),
            next_attempt_at: eb.case().when(asked(eb)).then(millis(eb, now)).else(eb.ref('next_attempt_at')).end(),
            ...(final === 'delivered'
              ? { delivered_at: now, failed_at: null }
              : { failed_at: eb.case().when(asked(eb)).then(null).else(millis(eb, now)).end() }),
            locked_until: null,
            retry_requested: 0,
            attempts: eb('attempts', '+', 1),
          }))
          .where(idIn(db, chunk))
          .returning(['id', 'status'])
          .execute();
        for (const row of rows) if (row.status === 'pending') requeued.add(row.id);
      }
    }
    // Skipped: ended unsent, unless a retry was asked for meanwhile (it is then looked at again, in the format of then).
    for (const chunk of idLists(db, ids('skipped'))) {
      const rows = await db
        .updateTable('webhook_events')
        .set((eb) => ({
          status: eb.case().when(asked(eb)).then('pending').else('skipped').end(),
          next_attempt_at: eb.case().when(asked(eb)).then(millis(eb, now)).else(eb.ref('next_attempt_at')).end(),
          locked_until: null,
          retry_requested: 0,
        }))
        .where(idIn(db, chunk))
        .returning(['id', 'status'])
        .execute();
      for (const row of rows) if (row.status === 'pending') requeued.add(row.id);
    }
    for (const item of items) {
      if (item.outcome !== 'retry') continue;
      const row = await db
        .updateTable('webhook_events')
        .set((eb) => ({
          next_attempt_at: eb.case().when(asked(eb)).then(millis(eb, now)).else(millis(eb, item.retryAt)).end(),
          locked_until: null,
          retry_requested: 0,
          attempts: eb('attempts', '+', 1),
        }))
        .where('id', '=', item.id)
        .returning(['id', 'next_attempt_at'])
        .executeTakeFirst();
      if (row !== undefined && Number(row.next_attempt_at) <= now) requeued.add(row.id);
    }
    for (const chunk of idLists(db, ids('released'))) {
      await db
        .updateTable('webhook_events')
        .set({ locked_until: null, next_attempt_at: now, retry_requested: 0 })
        .where(idIn(db, chunk))
        .execute();
      for (const id of chunk) requeued.add(id);
    }
    return requeued;
  },

  /**
   * A paused receiver's waiting deliveries (not in flight) become due at
   * `until` instead, at most `limit` of them, earliest first. No attempt is
   * counted. Answers how many moved.
   */
  defer: async (db: Db, scope: DeliveryScope, until: number, now: number, limit: number): Promise<number> => {
    const rows = await db
      .updateTable('webhook_events')
      .set({ next_attempt_at: until })
      .where(
        'id',
        'in',
        db
          .selectFrom('webhook_events')
          .select('id')
          .where((eb) => inScope(eb, scope))
          .where('status', '=', 'pending')
          .where('next_attempt_at', '<', until)
          .where((eb) => eb.or([eb('locked_until', 'is', null), eb('locked_until', '<=', now)]))
          .orderBy('next_attempt_at')
          .limit(limit),
      )
      .returning('id')
      .execute();
    return rows.length;
  },

  /** Waiting deliveries of the receiver created before `createdBefore` (the give-up age) end `failed`, unattempted. */
  failExpired: async (db: Db, scope: DeliveryScope, createdBefore: number, now: number): Promise<void> => {
    await db
      .updateTable('webhook_events')
      .set({ status: 'failed', failed_at: now, locked_until: null })
      .where((eb) => inScope(eb, scope))
      .where('status', '=', 'pending')
      .where('created_at', '<=', createdBefore)
      .where((eb) => eb.or([eb('locked_until', 'is', null), eb('locked_until', '<=', now)]))
      .execute();
  },

  /**
   * Hands back the rows a failed claim may have leased: the claim's answer can be lost after the server
   * committed it (a server frozen past the client's wait). Matched by the claim's lease end, which the
   * claim wrote to both `locked_until` and `next_attempt_at`; an attempt's outcome clears the lease, so only
   * rows still held by that claim match. Another process's claim ending in the same millisecond would be
   * handed back too, and attempted twice: deliveries are at least once, and receivers dedupe by webhook-id.
   */
  releaseLease: async (db: Db, leaseUntil: number, now: number): Promise<number> => {
    const result = await db
      .updateTable('webhook_events')
      .set({ locked_until: null, next_attempt_at: now })
      .where('status', '=', 'pending')
      .where('locked_until', '=', leaseUntil)
      .where('next_attempt_at', '=', leaseUntil)
      .executeTakeFirst();
    return Number(result.numUpdatedRows);
  },

  /**
   * Clears every lease. Only for a store one process owns (SQLite), at start-up:
   * leases left by a crash would otherwise hold their deliveries until they expire.
   */
  releaseAllLeases: async (db: Db, now: number): Promise<void> => {
    await db
      .updateTable('webhook_events')
      .set({ locked_until: null, next_attempt_at: now })
      .where('locked_until', 'is not', null)
      .where('status', '=', 'pending')
      .execute();
  },

  // --- incoming messages ------------------------------------------------------------

  /** Remembers the network's id of an incoming message; false when it was seen before (a repeat). */
  claimIncomingId: async (
    db: Db,
    deviceId: number,
    networkId: string,
    messageId: string,
    now: number,
  ): Promise<boolean> => {
    const result = await db
      .insertInto('incoming_message_ids')
      .values({ device_id: deviceId, network_id: networkId, message_id: messageId, created_at: now })
      .onConflict((oc) => oc.columns(['device_id', 'network_id']).doNothing())
      .executeTakeFirst();
    return Number(result.numInsertedOrUpdatedRows ?? 0n) === 1;
  },
};
