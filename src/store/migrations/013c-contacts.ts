/**
 * Contacts and group pictures (DECISIONS 16; docs/api.md, Contacts).
 *
 * - `contact_profiles`: per device, the last profile the network showed of a number (`GET /contacts/{phone}`):
 *   name, about text, picture address, registered and blocked, and when it was read (`fetched_at`); answered
 *   from here for up to 24 hours. Blocking and unblocking through the gateway change `blocked` at once; a
 *   `contact_changed` from the network drops the row, so the next read asks the network again.
 * - `groups.picture_id`: names the group's current picture as the network reported it (null: none, or a network
 *   that does not report it), so a sync sees a picture change (`group.updated`).
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('contact_profiles')
    .addColumn('device_id', 'integer', (col) => col.notNull())
    .addColumn('phone', 'text', (col) => col.notNull())
    .addColumn('name', 'text')
    .addColumn('about', 'text')
    .addColumn('picture_url', 'text')
    .addColumn('registered', 'integer', (col) => col.notNull())
    .addColumn('blocked', 'integer', (col) => col.notNull())
    .addColumn('fetched_at', 'bigint', (col) => col.notNull())
    .addPrimaryKeyConstraint('contact_profiles_pk', ['device_id', 'phone'])
    .execute();
  await db.schema.alterTable('groups').addColumn('picture_id', 'text').execute();
}
