/** Accounts, API tokens and devices (issue: the gateway's foundation). */
import type { Kysely } from 'kysely';
import type { MigrationDialect } from './helpers.js';

export async function up(db: Kysely<unknown>, dialect: MigrationDialect): Promise<void> {
  await dialect
    .idColumn(db.schema.createTable('accounts'))
    .addColumn('name', 'text', (col) => col.notNull().unique())
    .addColumn('max_devices', 'integer', (col) => col.notNull())
    .addColumn('created_at', 'bigint', (col) => col.notNull())
    .addColumn('updated_at', 'bigint', (col) => col.notNull())
    .execute();

  await dialect
    .idColumn(db.schema.createTable('api_tokens'))
    .addColumn('account_id', 'bigint', (col) => col.notNull().references('accounts.id'))
    .addColumn('name', 'text', (col) => col.notNull())
    .addColumn('prefix', 'text', (col) => col.notNull())
    .addColumn('token_hash', 'text', (col) => col.notNull().unique())
    .addColumn('created_at', 'bigint', (col) => col.notNull())
    .addColumn('last_used_at', 'bigint')
    .addColumn('revoked_at', 'bigint')
    .execute();
  await db.schema.createIndex('api_tokens_account').on('api_tokens').column('account_id').execute();

  await dialect
    .idColumn(db.schema.createTable('devices'))
    .addColumn('account_id', 'bigint', (col) => col.notNull().references('accounts.id'))
    .addColumn('name', 'text', (col) => col.notNull())
    .addColumn('phone', 'text')
    .addColumn('expected_phone', 'text')
    .addColumn('package_code', 'text', (col) => col.notNull())
    .addColumn('status', 'text', (col) => col.notNull())
    .addColumn('paired_status', 'text', (col) => col.notNull())
    .addColumn('connected', 'integer', (col) => col.notNull().defaultTo(0))
    .addColumn('webhook_url', 'text')
    .addColumn('webhook_secret', 'text', (col) => col.notNull())
    .addColumn('quota_limit', 'bigint', (col) => col.notNull())
    .addColumn('quote_used', 'bigint', (col) => col.notNull().defaultTo(0))
    .addColumn('send_interval_ms', 'integer')
    .addColumn('server_name', 'text')
    .addColumn('network_session', 'text')
    .addColumn('created_at', 'bigint', (col) => col.notNull())
    .addColumn('updated_at', 'bigint', (col) => col.notNull())
    .addColumn('deleted_at', 'bigint')
    .execute();
  await db.schema.createIndex('devices_account').on('devices').columns(['account_id', 'id']).execute();
  await db.schema.createIndex('devices_account_phone').on('devices').columns(['account_id', 'phone']).execute();
}
