/**
 * Indexes that let retention (src/store/retention.ts) find what has expired
 * without scanning: ended webhook deliveries by the time they ended, and
 * idempotency keys by the time they were taken. Old messages need none: their
 * ids are ULIDs drawn from the acceptance time, so the primary key orders
 * them by age already (no extra index on the hottest insert).
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex('webhook_events_delivered').on('webhook_events').column('delivered_at').execute();
  await db.schema.createIndex('webhook_events_failed').on('webhook_events').column('failed_at').execute();
  await db.schema.createIndex('idempotency_keys_created').on('idempotency_keys').column('created_at').execute();
}
