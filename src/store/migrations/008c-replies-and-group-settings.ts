/**
 * Replies and group settings (docs/internals.md, Whatspie compatibility).
 *
 * - `messages.quoted`: the message an outgoing one replies to, resolved when
 *   it was accepted (JSON of the network seam's QuotedMessage), so the sender
 *   needs no lookup and a retry quotes the same message. Null: not a reply.
 * - `incoming_message_ids(message_id)`: a reply may name an incoming message
 *   by the gateway's id; this finds its network id.
 * - `groups.only_admins_can_send`, `only_admins_can_edit` (0/1) and
 *   `disappearing_seconds` (0: off): the settings the network last reported;
 *   null until it reports them.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('messages').addColumn('quoted', 'text').execute();
  await db.schema.createIndex('incoming_message_ids_message').on('incoming_message_ids').column('message_id').execute();
  await db.schema.alterTable('groups').addColumn('only_admins_can_send', 'integer').execute();
  await db.schema.alterTable('groups').addColumn('only_admins_can_edit', 'integer').execute();
  await db.schema.alterTable('groups').addColumn('disappearing_seconds', 'integer').execute();
}
