/**
 * A device's own `webhook_url` backlog (DECISIONS 17: each destination's backlog in `GET /gateway`; docs/webhooks.md,
 * Backlog and state): `webhook_events_pending_device_url` finds the deliveries still to be made to a device's own
 * URL, so `GET /gateway` counts them without reading the delivered ones. Partial, as 013g's for account webhooks:
 * only pending deliveries with no account webhook are in it, and a delivery leaves it once delivered, failed or
 * skipped.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createIndex('webhook_events_pending_device_url')
    .on('webhook_events')
    .column('device_id')
    .where(sql<boolean>`status = 'pending' and webhook_id is null`)
    .execute();
}
