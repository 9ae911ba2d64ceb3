/**
 * Network state (docs/internals.md, WhatsApp and sandbox accounts): what a real network needs to keep per session
 * to reconnect without pairing again, stored next to everything else so that
 * it is as durable as the messages and can move between nodes.
 *
 * - `network_auth`: one row per session. `creds` is the sealed credentials
 *   blob; `fence` grows with every claim, so only the latest claimant writes.
 * - `network_auth_keys`: the session's keys (thousands of rows per session,
 *   written on nearly every message), each value sealed.
 * - `network_sent`: what the session sent, sealed, so the network's requests
 *   to send a message again can be answered; kept 14 days (docs/internals.md, Retention).
 *
 * The gateway never reads the values: they are opaque sealed bytes.
 */
import type { Kysely } from 'kysely';
import type { MigrationDialect } from './helpers.js';

export async function up(db: Kysely<unknown>, dialect: MigrationDialect): Promise<void> {
  await db.schema
    .createTable('network_auth')
    .addColumn('session_id', 'text', (col) => col.primaryKey())
    .addColumn('creds', dialect.blobType)
    .addColumn('fence', 'bigint', (col) => col.notNull().defaultTo(0))
    .addColumn('created_at', 'bigint', (col) => col.notNull())
    .addColumn('updated_at', 'bigint', (col) => col.notNull())
    .execute();
  await db.schema
    .createTable('network_auth_keys')
    .addColumn('session_id', 'text', (col) => col.notNull())
    .addColumn('kind', 'text', (col) => col.notNull())
    .addColumn('key_id', 'text', (col) => col.notNull())
    .addColumn('value', dialect.blobType, (col) => col.notNull())
    .addPrimaryKeyConstraint('network_auth_keys_pk', ['session_id', 'kind', 'key_id'])
    .execute();
  await db.schema
    .createTable('network_sent')
    .addColumn('session_id', 'text', (col) => col.notNull())
    .addColumn('message_id', 'text', (col) => col.notNull())
    .addColumn('payload', dialect.blobType, (col) => col.notNull())
    .addColumn('acked_at', 'bigint')
    .addColumn('created_at', 'bigint', (col) => col.notNull())
    .addPrimaryKeyConstraint('network_sent_pk', ['session_id', 'message_id'])
    .execute();
  await db.schema.createIndex('network_sent_created').on('network_sent').column('created_at').execute();
}
