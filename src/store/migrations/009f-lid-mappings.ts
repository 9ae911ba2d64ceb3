/**
 * Senders known by LID (docs/whatsapp.md, Senders known by LID).
 *
 * - `lid_senders`: per device, each LID (`12345@lid`) whose messages the
 *   gateway delivered with the LID as the sender because no phone number was
 *   known for it yet, and, once the network made the number known, that
 *   number and when it was reported (`contact.lid_resolved`, recorded once).
 *
 * Not a second copy of the network's LID/number mappings: WhatsApp's library
 * keeps those in the session's own sealed state (`lid-mapping` keys) and the
 * connector looks them up there. This table holds what the gateway told its
 * clients, so the report is made exactly once, across restarts and nodes.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('lid_senders')
    .addColumn('device_id', 'integer', (col) => col.notNull())
    .addColumn('lid', 'text', (col) => col.notNull())
    .addColumn('phone', 'text')
    .addColumn('first_seen_at', 'bigint', (col) => col.notNull())
    .addColumn('resolved_at', 'bigint')
    .addPrimaryKeyConstraint('lid_senders_pk', ['device_id', 'lid'])
    .execute();
}
