/**
 * Lists and templates on a network that delivers them as text (docs/internals.md, WhatsApp and sandbox accounts).
 *
 * - `messages.rendered_as`: how the network delivered an outgoing message
 *   when not in its own form (`text`); null otherwise. Set when it is sent.
 * - `network_offers`: per session and chat, the choices last offered there as
 *   numbered text (sealed by the network), so a reply within 24 h that picks
 *   one is read back as the choice. One row per chat (the newest offer
 *   replaces the one before); deleted after 24 h and with the session.
 */
import type { Kysely } from 'kysely';
import type { MigrationDialect } from './helpers.js';

export async function up(db: Kysely<unknown>, dialect: MigrationDialect): Promise<void> {
  await db.schema.alterTable('messages').addColumn('rendered_as', 'text').execute();
  await db.schema
    .createTable('network_offers')
    .addColumn('session_id', 'text', (col) => col.notNull())
    .addColumn('chat', 'text', (col) => col.notNull())
    .addColumn('payload', dialect.blobType, (col) => col.notNull())
    .addColumn('created_at', 'bigint', (col) => col.notNull())
    .addPrimaryKeyConstraint('network_offers_pk', ['session_id', 'chat'])
    .execute();
  await db.schema.createIndex('network_offers_created').on('network_offers').column('created_at').execute();
}
