/**
 * SQL for the outbound state machine of `messages` (src/dispatch/dispatcher.ts): a retry's schedule, `sent`,
 * `failed`, a refusal after `sent`, and the network's receipts. Every change only moves a message forward.
 *
 * Owns: those status changes, one at a time (each prepared twice: reading the row back, for a webhook event, or
 * only whether it moved) and in batches. A batch is one statement with each column's values in one parameter (an
 * array read with `unnest` on PostgreSQL, JSON read with `json_each` on SQLite): one shape for any size, nothing
 * padded.
 * Must never: decide which change a message gets (the dispatcher does), or change a message backwards.
 */
import { sql, type ExpressionBuilder, type UpdateQueryBuilder, type UpdateResult } from 'kysely';
import { onPostgres } from '../store/dialect.js';
import { compiled, prepared } from '../store/prepared.js';
import type { Database, Db } from '../store/schema.js';
import { messageMediaRepository } from './media-repository.js';
import { queueSpan } from './queue-span.js';
import type { MessageRow } from './repository.js';

/**
 * A status change, prepared twice: reading the changed row back (to announce
 * it in a webhook event) or only its id (whether it moved). Reading all 22
 * columns back made a status write three times as costly in SQLite, and
 * most devices have no webhook to announce it to.
 */
function statusChange<A extends readonly unknown[]>(
  arity: A['length'],
  build: (db: Db, ...args: A) => UpdateQueryBuilder<Database, 'messages', 'messages', UpdateResult>,
) {
  return {
    row: prepared(arity, (db, ...args: A) => build(db, ...args).returningAll()),
    moved: prepared(arity, (db, ...args: A) => build(db, ...args).returning('id')),
  };
}

const markSentChange = statusChange(3, (db, id: string, at: number, renderedAs: string | null) =>
  db
    .updateTable('messages')
    .set({ status: 'sent', sent_at: at, rendered_as: renderedAs })
    .where('id', '=', id)
    .where('status', '=', 'pending'),
);

const markFailedStatement = prepared(3, (db, id: string, at: number, reason: string) =>
  db
    .updateTable('messages')
    .set({ status: 'failed', failed_at: at, failed_reason: reason })
    .where('id', '=', id)
    .where('status', '=', 'pending')
    .returningAll(),
);

/** The network refused a message it had taken: sent (or still pending here) → failed. Never undoes a delivery. */
const markRefusedStatement = prepared(4, (db, id: string, deviceId: number, at: number, reason: string) =>
  db
    .updateTable('messages')
    .set({ status: 'failed', failed_at: at, failed_reason: reason })
    .where('id', '=', id)
    .where('device_id', '=', deviceId)
    .where('status', 'in', ['pending', 'sent'])
    .returningAll(),
);

/**
 * Rows a network receipt may move: those in `from`, and a message given up as failed that never reached `sent` (its
 * ack came too late, docs/whatsapp.md, Acknowledgements). A message the network refused after `sent` stays failed.
 */
function revivable(from: ReadonlyArray<'pending' | 'sent' | 'delivered'>) {
  return (eb: ExpressionBuilder<Database, 'messages'>) =>
    eb.and([
      // An action (actions.ts) is no message: a receipt the network gives for it moves nothing and announces nothing.
      eb('direction', '<>', 'action'),
      eb.or([eb('status', 'in', from), eb.and([eb('status', '=', 'failed'), eb('sent_at', 'is', null)])]),
    ]);
}

/**
 * The network acknowledged a send after its wait had run out (docs/whatsapp.md, Acknowledgements): pending (a retry
 * queued) or failed (retries given up) → sent. The network's word that it took the message wins over the guess.
 */
const markAckedLateChange = statusChange(3, (db, id: string, deviceId: number, at: number) =>
  db
    .updateTable('messages')
    .set({ status: 'sent', sent_at: at, failed_at: null, failed_reason: null })
    .where('id', '=', id)
    .where('device_id', '=', deviceId)
    .where(revivable(['pending'])),
);

/** A delivery receipt; also for a message given up as failed, which the phone has after all. */
const markDeliveredChange = statusChange(3, (db, id: string, deviceId: number, at: number) =>
  db
    .updateTable('messages')
    .set((eb) => ({
      status: 'delivered',
      delivered_at: at,
      sent_at: eb.fn.coalesce('sent_at', eb.val(at)),
      failed_at: null,
      failed_reason: null,
    }))
    .where('id', '=', id)
    .where('device_id', '=', deviceId)
    .where(revivable(['pending', 'sent'])),
);

const markReadChange = statusChange(3, (db, id: string, deviceId: number, at: number) =>
  db
    .updateTable('messages')
    .set((eb) => ({
      status: 'delivered',
      read_at: at,
      delivered_at: eb.fn.coalesce('delivered_at', eb.val(at)),
      sent_at: eb.fn.coalesce('sent_at', eb.val(at)),
      failed_at: null,
      failed_reason: null,
    }))
    .where('id', '=', id)
    .where('device_id', '=', deviceId)
    .where('read_at', 'is', null)
    .where(revivable(['pending', 'sent', 'delivered'])),
);

/** What a status change answers: the changed row (or undefined) when read back, else whether it changed. */
export type StatusChanged<R extends boolean> = R extends true ? MessageRow | undefined : boolean;

function outcome<R extends boolean>(changed: readonly unknown[], readBack: R): StatusChanged<R> {
  return (readBack ? changed[0] : changed.length > 0) as StatusChanged<R>;
}

/** A receipt's status change for one device's message; `readBack` as for markSent. */
function receipt(change: ReturnType<typeof statusChange<readonly [id: string, deviceId: number, at: number]>>) {
  return async <R extends boolean>(
    db: Db,
    deviceId: number,
    id: string,
    at: number,
    readBack: R,
  ): Promise<StatusChanged<R>> => outcome(await (readBack ? change.row : change.moved)(db, id, deviceId, at), readBack);
}

/** A receipt's change in a batch (delivered, read), for one device's message. */
export interface ReceiptChange {
  readonly id: string;
  readonly deviceId: number;
  readonly at: number;
}
/** A `sent` change in a batch (no media): also where the message lies in its device's queue (`seq`). */
export interface SentChange extends ReceiptChange {
  readonly seq: number;
  readonly renderedAs?: string | null;
}
/** A change of a batch, by kind: `sent` (no media) or a receipt. */
export interface BatchedChanges {
  sent: SentChange;
  delivered: ReceiptChange;
  read: ReceiptChange;
}
export type BatchedKind = 'sent' | 'delivered' | 'read';

/**
 * Each kind's SET and extra WHERE, written once for both dialects over the joined batch row `c`
 * (columns id, device_id, at, rendered_as). A receipt may revive a message given up as failed that never reached
 * `sent` (its ack came too late); one the network refused after `sent` stays failed.
 */
const REVIVABLE = (from: string) =>
  `messages.direction <> 'action' and (messages.status in (${from}) or (messages.status = 'failed' and messages.sent_at is null))`;
const BATCHED: Record<BatchedKind, { set: string; where: string }> = {
  sent: { set: `status = 'sent', sent_at = c.at, rendered_as = c.rendered_as`, where: `messages.status = 'pending'` },
  delivered: {
    set: `status = 'delivered', delivered_at = c.at, sent_at = coalesce(messages.sent_at, c.at),
      failed_at = null, failed_reason = null`,
    where: REVIVABLE(`'pending', 'sent'`),
  },
  read: {
    set: `status = 'delivered', read_at = c.at, delivered_at = coalesce(messages.delivered_at, c.at),
      sent_at = coalesce(messages.sent_at, c.at), failed_at = null, failed_reason = null`,
    where: `messages.read_at is null and ${REVIVABLE(`'pending', 'sent', 'delivered'`)}`,
  },
};

/**
 * A kind's statement for both dialects, as one runner over the batch's changes. The `sent` statement also names
 * where the batch lies in its devices' queues (their ids and the span of their `seq`): a message still `pending` is
 * then found through the queue's own index, whatever the planner's statistics say (the claim's reason,
 * actions-repository.ts; docs/internals.md, The queue's statements and the planner). Receipts name no `pending`
 * message alone and need no span.
 */
function batchedStatements<K extends BatchedKind>(kind: K, returning = false) {
  const { set, where } = BATCHED[kind];
  const tail = sql.raw(`messages.id = c.id and messages.device_id = c.device_id and ${where}`);
  // PostgreSQL's `returning *` would add the batch's columns; SQLite returns only the updated table's anyway.
  const pgReturning = sql.raw(returning ? ' returning messages.*' : '');
  const sqliteReturning = sql.raw(returning ? ' returning *' : '');
  const update = (ids: unknown, devices: unknown, ats: unknown, rendered: unknown) =>
    sql`update messages set ${sql.raw(set)}
      from unnest(${ids}::text[], ${devices}::bigint[], ${ats}::bigint[], ${rendered}::text[])
        as c(id, device_id, at, rendered_as)
      where ${tail}`;
  const postgresSpanned = prepared(
    6,
    (db, ids: string[], devices: number[], ats: number[], rendered: unknown[], first: number, last: number) =>
      compiled<MessageRow>(
        db,
        sql`${update(ids, devices, ats, rendered)}
          and messages.device_id = any(${devices}::bigint[]) and messages.seq between ${first} and ${last}${pgReturning}`,
      ),
  );
  const postgres = prepared(4, (db, ids: string[], devices: number[], ats: number[], rendered: unknown[]) =>
    compiled<MessageRow>(db, sql`${update(ids, devices, ats, rendered)}${pgReturning}`),
  );
  /** Rows as JSON: `[[id, deviceId, at, renderedAs], ...]`. */
  const sqlite = prepared(1, (db, rowsJson: string) =>
    compiled<MessageRow>(
      db,
      sql`update messages set ${sql.raw(set)}
      from (select json_extract(value, '$[0]') as id, json_extract(value, '$[1]') as device_id,
          json_extract(value, '$[2]') as at, json_extract(value, '$[3]') as rendered_as
        from json_each(${rowsJson})) as c
      where ${tail}${sqliteReturning}`,
    ),
  );
  /** Runs the statement over distinct messages' changes; answers what it returned. */
  return (db: Db, rows: readonly BatchedChanges[K][]): Promise<MessageRow[]> => {
    const rendered = (c: BatchedChanges[K]) => ('renderedAs' in c ? (c.renderedAs ?? null) : null);
    if (!onPostgres(db)) {
      return sqlite(db, JSON.stringify(rows.map((c) => [c.id, c.deviceId, c.at, rendered(c)])));
    }
    const ids = rows.map((c) => c.id);
    const devices = rows.map((c) => c.deviceId);
    const ats = rows.map((c) => c.at);
    if (kind !== 'sent') return postgres(db, ids, devices, ats, rows.map(rendered));
    const { first, last } = queueSpan(rows as readonly SentChange[]);
    return postgresSpanned(db, ids, devices, ats, rows.map(rendered), first, last);
  };
}

/** Which of these messages (id and device) have never been `sent` (no `sent_at`), in one statement. */
const neverSentMany = {
  postgres: prepared(1, (db, ids: readonly string[]) =>
    compiled<{ id: string; device_id: number }>(
      db,
      sql`select id, device_id from messages where id = any(${ids}::text[]) and sent_at is null`,
    ),
  ),
  sqlite: prepared(1, (db, idsJson: string) =>
    compiled<{ id: string; device_id: number }>(
      db,
      sql`select id, device_id from messages where id in (select value from json_each(${idsJson})) and sent_at is null`,
    ),
  ),
};

type BatchedRunner<K extends BatchedKind> = ReturnType<typeof batchedStatements<K>>;
const batched = {
  sent: batchedStatements('sent'),
  delivered: batchedStatements('delivered'),
  read: batchedStatements('read'),
};
/** The same statements, answering the changed rows (to announce them in webhook events). */
const batchedReturning = {
  sent: batchedStatements('sent', true),
  delivered: batchedStatements('delivered', true),
  read: batchedStatements('read', true),
};

export const messageStatusRepository = {
  scheduleRetry: async (db: Db, id: string, attempts: number, nextAttemptAt: number): Promise<void> => {
    // The attempt is over: until the next one claims it again, a cancel may end the message.
    await db
      .updateTable('messages')
      .set({ attempts, next_attempt_at: nextAttemptAt, claimed_at: null })
      .where('id', '=', id)
      .execute();
  },

  /**
   * pending → sent; the media is no longer needed. With `readBack`, answers
   * the changed row (undefined when the message had moved on already);
   * without, only whether it changed. `renderedAs`: how the network delivered
   * it when not in its own form (docs/internals.md, WhatsApp and sandbox accounts), else null.
   */
  markSent: async <R extends boolean>(
    db: Db,
    id: string,
    at: number,
    hasMedia: boolean,
    readBack: R,
    renderedAs: string | null = null,
  ): Promise<StatusChanged<R>> => {
    const changed = await (readBack ? markSentChange.row : markSentChange.moved)(db, id, at, renderedAs);
    if (hasMedia) await messageMediaRepository.deleteMedia(db, id);
    return outcome(changed, readBack);
  },

  /** pending → failed; the media is no longer needed. */
  markFailed: async (db: Db, id: string, at: number, reason: string): Promise<MessageRow | undefined> => {
    const [row] = await markFailedStatement(db, id, at, reason);
    await messageMediaRepository.deleteMedia(db, id);
    return row;
  },

  /**
   * The network refused the message after taking it (docs/internals.md, WhatsApp and sandbox accounts). Its quota unit is not given back:
   * it reached the network. The media, if still held, goes as for any final state.
   */
  markRefused: async (
    db: Db,
    deviceId: number,
    id: string,
    at: number,
    reason: string,
  ): Promise<MessageRow | undefined> => {
    const [row] = await markRefusedStatement(db, id, deviceId, at, reason);
    if (row !== undefined) await messageMediaRepository.deleteMedia(db, id);
    return row;
  },

  /** pending|failed → sent: an ack after the send's wait ran out. `readBack` as for markSent. */
  markAckedLate: receipt(markAckedLateChange),

  /** pending|sent|failed → delivered (a receipt may overtake the `sent` write). `readBack` as for markSent. */
  markDelivered: receipt(markDeliveredChange),

  /**
   * The same changes as markSent (no media, no read-back), markDelivered and markRead, for many messages in one
   * statement. A message named twice changes once, by its first change (as one at a time would).
   */
  changeMany: async <K extends BatchedKind>(db: Db, kind: K, changes: readonly BatchedChanges[K][]): Promise<void> => {
    const firsts = new Map<string, BatchedChanges[K]>();
    for (const change of changes) if (!firsts.has(change.id)) firsts.set(change.id, change);
    if (firsts.size === 0) return;
    await (batched[kind] as BatchedRunner<K>)(db, [...firsts.values()]);
  },

  /**
   * The same changes as changeMany, for changes of distinct messages, answering the changed rows (as they are after
   * the change; a message that did not move is not among them). `sent` here is markSent's without media.
   */
  changeManyReadBack: <K extends BatchedKind>(
    db: Db,
    kind: K,
    changes: readonly BatchedChanges[K][],
  ): Promise<MessageRow[]> =>
    changes.length === 0 ? Promise.resolve([]) : (batchedReturning[kind] as BatchedRunner<K>)(db, changes),

  /**
   * Which of these messages have never been `sent` (no `sent_at`), each for the device named with it: a receipt
   * that moves one now overtook the send's own write, and `message.sent` is still to be recorded.
   */
  neverSentMany: async (db: Db, messages: ReadonlyArray<{ id: string; deviceId: number }>): Promise<Set<string>> => {
    if (messages.length === 0) return new Set();
    const ids = messages.map((m) => m.id);
    const rows = onPostgres(db)
      ? await neverSentMany.postgres(db, ids)
      : await neverSentMany.sqlite(db, JSON.stringify(ids));
    const deviceOf = new Map(messages.map((m) => [m.id, m.deviceId]));
    return new Set(rows.filter((row) => deviceOf.get(row.id) === Number(row.device_id)).map((row) => row.id));
  },

  /** A read receipt: read_at set once; reading implies delivery. `readBack` as for markSent. */
  markRead: receipt(markReadChange),
};
