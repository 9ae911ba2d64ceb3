/**
 * The event log as the broker drivers read it (src/events/log.ts): every account's events in log order, and how
 * many wait after a cursor (all of them for /metrics; one account's for `GET /gateway`, through `events_account`).
 *
 * Owns: the backlog count and its cap. Must never: write, or read the log in another order than readLog's.
 */
import { sql } from 'kysely';
import { decodeCursor, readLog } from '../events/log.js';
import type { Db } from '../store/schema.js';
import type { EventLogReader } from './driver.js';

/** The backlog is counted up to this (a scrape stays cheap however far behind a broker is). */
export const BACKLOG_CAP = 100_000;

export function logReader(db: Db): EventLogReader {
  return {
    read: (after, limit) => readLog(db, after, {}, limit),
    async backlog(after, accountId) {
      const from = after === null ? null : decodeCursor(after);
      let rows = db
        .selectFrom('events')
        .select(sql<number>`1`.as('one'))
        .limit(BACKLOG_CAP);
      if (accountId !== undefined) rows = rows.where('account_id', '=', accountId);
      if (from !== null) rows = rows.where((eb) => eb(eb.refTuple('xact', 'seq'), '>', eb.tuple(from.xact, from.seq)));
      const row = await db
        .selectFrom(rows.as('waiting'))
        .select((eb) => eb.fn.countAll<number | string>().as('n'))
        .executeTakeFirstOrThrow();
      return Number(row.n);
    },
  };
}
