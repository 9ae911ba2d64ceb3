/**
 * A webhook's backlog (DECISIONS 17; docs/webhooks.md, Backlog and state): `webhook_events_pending_webhook` finds an
 * account webhook's deliveries still to be made, so `GET /gateway` counts them without reading the delivered ones.
 * Partial: only pending deliveries to account webhooks are in it (a device's own `webhook_url` adds nothing), and a
 * delivery leaves it once delivered, failed or skipped.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createIndex('webhook_events_pending_webhook')
    .on('webhook_events')
    .column('webhook_id')
    .where(sql<boolean>`status = 'pending' and webhook_id is not null`)
    .execute();
}
