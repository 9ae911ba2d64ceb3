/**
 * Webhook deliveries by lane on SQLite too (issues 25 and 28): the index 013i made for PostgreSQL, on SQLite. A claim
 * there (events/claim-repository.ts) scanned the due rows in time order and skipped those of lanes at their bound: a
 * receiver that fell behind left thousands of such rows in front of every claim, each claim grew slower, and the
 * deliverer fell further behind the other destinations. Claims now walk the lanes through this index, as on
 * PostgreSQL, and read only the due head of each lane with room.
 *
 * SQLite only: PostgreSQL has had the index since 013i.
 */
import { sql, type Kysely } from 'kysely';
import type { MigrationDialect } from './helpers.js';

export async function up(db: Kysely<unknown>, dialect: MigrationDialect): Promise<void> {
  if (dialect.laneClaims) return;
  await sql`
    create index webhook_events_lane_due
    on webhook_events (device_id, (coalesce(webhook_id, '')), next_attempt_at)
    where status = 'pending'
  `.execute(db);
}
