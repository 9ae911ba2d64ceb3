/**
 * The event log as the broker drivers read it (src/events/log.ts): every account's events in log order, and how
 * many wait after a cursor (all of them for /metrics; one account's for `GET /gateway`, through `events_account`).
 *
 * Owns: the backlog count and its cap. Must never: write, or read the log in another order than readLog's.
 */
import { sql } from 'kysely';
import { afterCursor, decodeCursor, readLog } from '../events/log.js';
import type { Db } from '../store/schema.js';
import type { EventLogReader } from './driver.js';

/** The backlog is counted up to this (a scrape stays cheap however far behind a broker is). */
export const BACKLOG_CAP = 100_000;

export function logReader(db: Db): EventLogReader {
  return {
    read: (after, limit) => readLog(db, after, {}, limit),
    async backlog(after, accountId) {
      const from = after === null ? null : decodeCursor(after);
      const rows = () => {
        const all = db.selectFrom('events').select(sql<number>`1`.as('one'));
        return accountId === undefined ? all : all.where('account_id', '=', accountId);
      };
      const waiting = (from === null ? rows() : afterCursor(db, from, rows)).limit(BACKLOG_CAP);
      const row = await db
        .selectFrom(waiting.as('waiting'))
        .select((eb) => eb.fn.countAll<number | string>().as('n'))
        .executeTakeFirstOrThrow();
      return Number(row.n);
    },
  };
}
