/**
 * Groups (docs/internals.md, Groups): the gateway's numbered view of each (device, network
 * group) pair, and the two per-group counters of member additions.
 *
 * `groups` holds the last snapshot the network gave (participants as JSON:
 * always replaced whole, never queried by member). `group_add_requests` has
 * one row per admitted members-add request, for the sliding one-minute window;
 * `group_daily_additions` one counter per group and UTC day, reserved before
 * the network is asked and corrected after it answered. Both counters are
 * read and written only under the group row's lock.
 */
import type { Kysely } from 'kysely';
import type { MigrationDialect } from './helpers.js';

export async function up(db: Kysely<unknown>, dialect: MigrationDialect): Promise<void> {
  await dialect
    .idColumn(db.schema.createTable('groups'))
    .addColumn('account_id', 'bigint', (col) => col.notNull())
    .addColumn('device_id', 'bigint', (col) => col.notNull())
    .addColumn('network_id', 'text', (col) => col.notNull())
    .addColumn('subject', 'text', (col) => col.notNull())
    .addColumn('description', 'text')
    .addColumn('participants', 'text', (col) => col.notNull())
    .addColumn('participant_count', 'integer', (col) => col.notNull())
    .addColumn('capacity', 'integer', (col) => col.notNull())
    .addColumn('device_admin', 'text')
    .addColumn('created_at', 'bigint', (col) => col.notNull())
    .addColumn('synced_at', 'bigint', (col) => col.notNull())
    .addColumn('left_at', 'bigint')
    .addUniqueConstraint('groups_device_network', ['device_id', 'network_id'])
    .execute();
  await db.schema.createIndex('groups_account').on('groups').columns(['account_id', 'device_id', 'id']).execute();

  await dialect
    .idColumn(db.schema.createTable('group_add_requests'))
    .addColumn('group_id', 'bigint', (col) => col.notNull())
    .addColumn('created_at', 'bigint', (col) => col.notNull())
    .execute();
  await db.schema
    .createIndex('group_add_requests_window')
    .on('group_add_requests')
    .columns(['group_id', 'created_at'])
    .execute();

  await db.schema
    .createTable('group_daily_additions')
    .addColumn('group_id', 'bigint', (col) => col.notNull())
    .addColumn('day', 'integer', (col) => col.notNull())
    .addColumn('used', 'integer', (col) => col.notNull())
    .addPrimaryKeyConstraint('group_daily_additions_pk', ['group_id', 'day'])
    .execute();
}
