/** Webhook events and their delivery attempts (recorded from the first state change that causes one). */
import type { Kysely } from 'kysely';
import type { MigrationDialect } from './helpers.js';

export async function up(db: Kysely<unknown>, dialect: MigrationDialect): Promise<void> {
  await db.schema
    .createTable('webhook_events')
    .addColumn('id', 'text', (col) => col.primaryKey())
    .addColumn('account_id', 'bigint', (col) => col.notNull())
    .addColumn('device_id', 'bigint', (col) => col.notNull())
    .addColumn('type', 'text', (col) => col.notNull())
    .addColumn('payload', 'text', (col) => col.notNull())
    .addColumn('url', 'text', (col) => col.notNull())
    .addColumn('status', 'text', (col) => col.notNull())
    .addColumn('attempts', 'integer', (col) => col.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'bigint', (col) => col.notNull())
    .addColumn('locked_until', 'bigint')
    .addColumn('created_at', 'bigint', (col) => col.notNull())
    .addColumn('delivered_at', 'bigint')
    .addColumn('failed_at', 'bigint')
    .execute();
  await db.schema
    .createIndex('webhook_events_due')
    .on('webhook_events')
    .columns(['status', 'next_attempt_at'])
    .execute();
  await db.schema
    .createIndex('webhook_events_device')
    .on('webhook_events')
    .columns(['device_id', 'created_at'])
    .execute();

  await dialect
    .idColumn(db.schema.createTable('webhook_attempts'))
    .addColumn('event_id', 'text', (col) => col.notNull())
    .addColumn('attempted_at', 'bigint', (col) => col.notNull())
    .addColumn('http_status', 'integer')
    .addColumn('latency_ms', 'integer', (col) => col.notNull())
    .addColumn('error', 'text')
    .execute();
  await db.schema.createIndex('webhook_attempts_event').on('webhook_attempts').column('event_id').execute();
}
