/**
 * Webhook deliveries by lane (issues 25 and 28): `webhook_events_lane_due` orders the pending deliveries by lane (a
 * device and one destination: its own URL, or one account webhook) and, within a lane, by when each is due. A claim on
 * PostgreSQL (events/repository.ts) walks the lanes through it, one index probe each, and reads only the due head of
 * each lane with room. Before, a claim read the due rows in time order across every lane and skipped those of lanes
 * already at their bound: with a slow receiver's backlog of tens of thousands of rows, every claim walked all of them,
 * claims grew slower as the backlog grew, and the deliverer fell further behind.
 *
 * PostgreSQL only: SQLite's one process claims with the scan of `webhook_events_due` (002), and an index it does not
 * read would only slow its writes.
 */
import { sql, type Kysely } from 'kysely';
import type { MigrationDialect } from './helpers.js';

export async function up(db: Kysely<unknown>, dialect: MigrationDialect): Promise<void> {
  if (!dialect.laneClaims) return;
  await sql`
    create index webhook_events_lane_due
    on webhook_events (device_id, (coalesce(webhook_id, '')), next_attempt_at)
    where status = 'pending'
  `.execute(db);
}
