/**
 * Reactions, edits and deletes made on phones (issue 26; docs/webhooks.md, Reactions, edits and deletes).
 *
 * - `message_reactions`: one row per (message, reacting phone) with the emoji shown; a later reaction of the same
 *   phone replaces it (the key makes it an upsert), one taken away (`""`) deletes the row. `reacted_at` is when the
 *   gateway recorded it (milliseconds), which orders a message's reactions. Deleted with the message by retention.
 * - `messages.edited_at`, `messages.deleted_at` (milliseconds): set when the message's author edited it (the
 *   message's text was replaced) or deleted it for everyone (its content stays). Null: never.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('message_reactions')
    .addColumn('message_id', 'text', (col) => col.notNull())
    .addColumn('phone', 'text', (col) => col.notNull())
    .addColumn('emoji', 'text', (col) => col.notNull())
    .addColumn('reacted_at', 'bigint', (col) => col.notNull())
    .addPrimaryKeyConstraint('message_reactions_pk', ['message_id', 'phone'])
    .execute();
  await db.schema.alterTable('messages').addColumn('edited_at', 'bigint').execute();
  await db.schema.alterTable('messages').addColumn('deleted_at', 'bigint').execute();
}
