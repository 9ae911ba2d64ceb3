/**
 * Webhook delivery (docs/internals.md, Webhooks): what the deliverer and the incoming-message
 * writer need beyond the tables of 002-events.
 *
 * - `webhook_events_leased`: the claim counts each device's deliveries in
 *   flight (`locked_until` in the future) to bound them per device. A partial
 *   index holding only leased rows (a lease is cleared when its attempt is
 *   recorded) keeps that a scan of the few rows in flight, not of the whole
 *   table; any comparison on `locked_until` lets both stores use it.
 * - `webhook_attempts.url`: where an attempt went, since the device's URL may
 *   change between attempts of one delivery.
 * - `incoming_message_ids`: the network's id of each incoming message per
 *   device, so a message the network repeats is stored and announced once.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createIndex('webhook_events_leased')
    .on('webhook_events')
    .columns(['device_id', 'locked_until'])
    .where(sql.ref('locked_until'), 'is not', null)
    .execute();
  await db.schema.alterTable('webhook_attempts').addColumn('url', 'text').execute();
  await db.schema
    .createTable('incoming_message_ids')
    .addColumn('device_id', 'bigint', (col) => col.notNull())
    .addColumn('network_id', 'text', (col) => col.notNull())
    .addColumn('message_id', 'text', (col) => col.notNull())
    .addColumn('created_at', 'bigint', (col) => col.notNull())
    .addPrimaryKeyConstraint('incoming_message_ids_pk', ['device_id', 'network_id'])
    .execute();
}
