/** Messages (outgoing and incoming), their media until sent, and idempotency keys. */
import type { Kysely } from 'kysely';
import type { MigrationDialect } from './helpers.js';

export async function up(db: Kysely<unknown>, dialect: MigrationDialect): Promise<void> {
  await dialect
    .idColumn(db.schema.createTable('messages'), 'seq')
    .addColumn('id', 'text', (col) => col.notNull().unique())
    .addColumn('account_id', 'bigint', (col) => col.notNull())
    .addColumn('device_id', 'bigint', (col) => col.notNull())
    .addColumn('direction', 'text', (col) => col.notNull())
    .addColumn('type', 'text', (col) => col.notNull())
    .addColumn('device_phone', 'text', (col) => col.notNull())
    .addColumn('receiver', 'text', (col) => col.notNull())
    .addColumn('sender', 'text')
    .addColumn('message', 'text')
    .addColumn('file_url', 'text')
    .addColumn('params', 'text', (col) => col.notNull())
    .addColumn('simulate_typing', 'integer', (col) => col.notNull())
    .addColumn('status', 'text', (col) => col.notNull())
    .addColumn('failed_reason', 'text')
    .addColumn('attempts', 'integer', (col) => col.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'bigint', (col) => col.notNull())
    .addColumn('created_at', 'bigint', (col) => col.notNull())
    .addColumn('sent_at', 'bigint')
    .addColumn('delivered_at', 'bigint')
    .addColumn('read_at', 'bigint')
    .addColumn('failed_at', 'bigint')
    .execute();
  await db.schema.createIndex('messages_outbox').on('messages').columns(['device_id', 'status', 'seq']).execute();
  await db.schema.createIndex('messages_account').on('messages').columns(['account_id', 'seq']).execute();

  await db.schema
    .createTable('message_media')
    .addColumn('message_id', 'text', (col) => col.primaryKey())
    .addColumn('mimetype', 'text', (col) => col.notNull())
    .addColumn('bytes', dialect.blobType, (col) => col.notNull())
    .execute();

  await db.schema
    .createTable('idempotency_keys')
    .addColumn('account_id', 'bigint', (col) => col.notNull())
    .addColumn('key', 'text', (col) => col.notNull())
    .addColumn('request_hash', 'text', (col) => col.notNull())
    .addColumn('response', 'text', (col) => col.notNull())
    .addColumn('created_at', 'bigint', (col) => col.notNull())
    .addPrimaryKeyConstraint('idempotency_keys_pk', ['account_id', 'key'])
    .execute();
}
