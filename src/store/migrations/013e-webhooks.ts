/**
 * Webhooks as a resource of the account (DECISIONS 17; docs/webhooks.md, Several webhooks).
 *
 * - `webhooks`: one destination of an account's events. `devices` and `events` are JSON arrays, or null for
 *   every device (present and future) and every event type; `headers` a JSON object of custom headers sent
 *   with each delivery; `enabled` 1 or 0. `secret` signs its deliveries (never returned but at creation and
 *   rotation, never logged); `secret_previous` and `secret_previous_until` keep the secret a rotation replaced
 *   signing beside the new one for a while, as the device's webhook secret does (007e).
 * - `webhook_events.webhook_id`: the account webhook a delivery goes to; null for the device's own
 *   `webhook_url`, which keeps working as before, as one more destination.
 * - `webhooks_account` finds an account's webhooks; `webhook_events_webhook` a webhook's deliveries.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('webhooks')
    .addColumn('id', 'text', (col) => col.primaryKey())
    .addColumn('account_id', 'bigint', (col) => col.notNull())
    .addColumn('url', 'text', (col) => col.notNull())
    .addColumn('devices', 'text')
    .addColumn('events', 'text')
    .addColumn('format', 'text', (col) => col.notNull())
    .addColumn('headers', 'text', (col) => col.notNull())
    .addColumn('enabled', 'integer', (col) => col.notNull())
    .addColumn('secret', 'text', (col) => col.notNull())
    .addColumn('secret_previous', 'text')
    .addColumn('secret_previous_until', 'bigint')
    .addColumn('created_at', 'bigint', (col) => col.notNull())
    .addColumn('updated_at', 'bigint', (col) => col.notNull())
    .execute();
  await db.schema.createIndex('webhooks_account').on('webhooks').columns(['account_id', 'created_at']).execute();
  await db.schema.alterTable('webhook_events').addColumn('webhook_id', 'text').execute();
  await db.schema
    .createIndex('webhook_events_webhook')
    .on('webhook_events')
    .columns(['webhook_id', 'created_at'])
    .execute();
}
