/**
 * Reading the event log (DECISIONS 17; docs/events.md): every event of every device, appended by record.ts inside
 * the transaction of the change that caused it, read in one order by `GET /events`, the streams and the brokers.
 *
 * The order is (xact, seq): the inserting transaction, then the row's number. A cursor encodes both (32 hex digits;
 * cursors compare as strings in log order) and a reader asks for what comes after it.
 *
 * Why not `seq` alone: on PostgreSQL `seq` is taken when the row is inserted, before its transaction commits, so
 * two transactions can commit out of `seq` order; a reader that had read up to the later one's rows would never see
 * the earlier one's. Instead a reader first asks for the horizon: the oldest transaction id still running in this
 * database (`pg_stat_activity.backend_xid`, set as soon as a transaction takes an id, before it writes), or, with
 * none running, the next id to be given. Then, in a later statement, it reads only rows of transactions below that:
 * each of those had ended when the horizon was taken, so a later snapshot sees all of its rows, and every transaction
 * still running or yet to start has an id at or above it, after the cursor. The two statements are in that order on
 * purpose: read in one statement, the rows' snapshot would come first and a transaction ending in between would be
 * passed over. A transaction of this database that runs long holds the log back until it ends: latency, never a gap;
 * other databases of the server do not (their ids are below the horizon too, but they write no row here). SQLite has
 * one writer, whose commit order is its rowid order: `xact` is 0 there.
 *
 * Owns: the cursor's encoding and the one query that reads the log.
 * Must never: return a row a later read could find before it (the horizon above), or write.
 */
import { sql, type SelectQueryBuilder } from 'kysely';
import { onPostgres } from '../store/dialect.js';
import type { Database, Db } from '../store/schema.js';

export interface LoggedEvent {
  /** Where this event is in the log: read after it to go on. */
  readonly cursor: string;
  /** The event id (`evt_…`). */
  readonly id: string;
  readonly type: string;
  readonly accountId: number;
  readonly deviceId: number;
  /** Epoch ms. */
  readonly createdAt: number;
  /** The standard JSON body `{id, type, device, created_at, data}`. */
  readonly body: string;
}

/** Which events to read; a field left out takes every value (an empty list takes none). */
export interface LogFilter {
  readonly accountId?: number;
  readonly deviceIds?: readonly number[];
  readonly types?: readonly string[];
}

/** The most rows one read returns. */
export const MAX_LOG_READ = 1_000;

const HEX = /^[0-9a-f]{32}$/;

/** The cursor of the row (xact, seq). */
export function encodeCursor(xact: number, seq: number): string {
  return xact.toString(16).padStart(16, '0') + seq.toString(16).padStart(16, '0');
}

/** The (xact, seq) a cursor stands for, or null when it is not one. */
export function decodeCursor(cursor: string): { readonly xact: number; readonly seq: number } | null {
  if (!HEX.test(cursor)) return null;
  const xact = Number.parseInt(cursor.slice(0, 16), 16);
  const seq = Number.parseInt(cursor.slice(16), 16);
  if (!Number.isSafeInteger(xact) || !Number.isSafeInteger(seq)) return null;
  return { xact, seq };
}

/** Whether `cursor` is a cursor `readLog` takes. */
export function isCursor(cursor: string): boolean {
  return decodeCursor(cursor) !== null;
}

/**
 * Up to `limit` events after the cursor (`null`: from the oldest kept), oldest first, matching the filter.
 * Throws a RangeError for a string that is no cursor (routes check with `isCursor` first).
 */
export async function readLog(db: Db, after: string | null, filter: LogFilter, limit: number): Promise<LoggedEvent[]> {
  const from = after === null ? null : decodeCursor(after);
  if (after !== null && from === null) throw new RangeError(`not an event log cursor: ${after}`);
  if (filter.deviceIds?.length === 0 || filter.types?.length === 0) return [];
  const postgres = onPostgres(db);
  // PostgreSQL: only rows of transactions that had ended when the horizon was taken (the header).
  const below = postgres ? await horizon(db) : null;
  const rows = () => {
    let query = db
      .selectFrom('events')
      .select(['seq', 'xact', 'id', 'type', 'account_id', 'device_id', 'created_at', 'payload']);
    if (filter.accountId !== undefined) query = query.where('account_id', '=', filter.accountId);
    if (filter.deviceIds !== undefined) query = query.where('device_id', 'in', [...filter.deviceIds]);
    if (filter.types !== undefined) query = query.where('type', 'in', [...filter.types]);
    if (below !== null) query = query.where('xact', '<', below);
    return query;
  };
  const query = (from === null ? rows() : afterCursor(db, from, rows))
    .orderBy('xact')
    .orderBy('seq')
    .limit(Math.max(1, Math.min(MAX_LOG_READ, Math.floor(limit))));
  const found = await query.execute();
  return found.map((row) => ({
    cursor: encodeCursor(Number(row.xact), Number(row.seq)),
    id: row.id,
    type: row.type,
    accountId: Number(row.account_id),
    deviceId: Number(row.device_id),
    createdAt: Number(row.created_at),
    body: row.payload,
  }));
}

/**
 * The rows of `rows()` after (xact, seq), in a form each store reads through its index from the cursor on, never from
 * the log's start. PostgreSQL bounds an index by the whole row value. SQLite bounds it by a row value's first column
 * only, and its `xact` is 0 on every row: there `(xact, seq) > (0, s)` walked the log from its start to reach the
 * rows after `s` (16 ms a read at 200,000 events, and growing with the log; bench/README.md). So on SQLite it is
 * spelled as the two ranges it stands for, each one index seek, merged in order: `xact = x and seq > s`, then
 * `xact > x`. The caller orders and limits the result (on SQLite, the union's).
 */
export function afterCursor<O>(
  db: Db,
  from: { readonly xact: number; readonly seq: number },
  rows: () => SelectQueryBuilder<Database, 'events', O>,
): SelectQueryBuilder<Database, 'events', O> {
  if (onPostgres(db)) return rows().where((eb) => eb(eb.refTuple('xact', 'seq'), '>', eb.tuple(from.xact, from.seq)));
  return rows()
    .where('xact', '=', from.xact)
    .where('seq', '>', from.seq)
    .unionAll(rows().where('xact', '>', from.xact));
}

/** The cursor of the newest event a reader can see now (null: the log is empty): where "from now on" starts. */
export async function logHead(db: Db): Promise<string | null> {
  let query = db.selectFrom('events').select(['xact', 'seq']).orderBy('xact', 'desc').orderBy('seq', 'desc').limit(1);
  if (onPostgres(db)) query = query.where('xact', '<', await horizon(db));
  const row = await query.executeTakeFirst();
  return row === undefined ? null : encodeCursor(Number(row.xact), Number(row.seq));
}

/** 2^32: `backend_xid` is a 32-bit id; the log's `xact` the 64-bit one (epoch above it). */
const EPOCH = 4_294_967_296;

/**
 * PostgreSQL: every transaction of this database with a 64-bit id below the answer has ended (see the header). The
 * 32-bit ids of `pg_stat_activity` are widened around the snapshot's xmax: an id at most 2^31 below xmax's 32-bit
 * part (modulo 2^32) is that far below xmax; any other id was assigned after the snapshot was taken (at or above
 * xmax) and cannot lower the horizon. (Reading such an id as one of the previous epoch put the horizon four billion
 * transactions back, and one read found nothing.) Must run in a statement of its own, before the rows are read.
 */
async function horizon(db: Db): Promise<number> {
  const { rows } = await sql<{ horizon: string }>`
    with s as (select pg_snapshot_xmax(pg_current_snapshot())::text::bigint as xmax),
    behind as (
      select s.xmax, (s.xmax % ${EPOCH} - a.backend_xid::text::bigint + ${EPOCH}) % ${EPOCH} as distance
      from s left join pg_stat_activity a
        on a.datname = current_database() and a.backend_xid is not null and a.pid <> pg_backend_pid()
    )
    select min(case when distance is not null and distance < ${EPOCH / 2} then xmax - distance else xmax end)::text
      as horizon
    from behind`.execute(db);
  return Number(rows[0]!.horizon);
}
