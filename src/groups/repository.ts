/**
 * SQL for groups and their member-addition counters.
 *
 * Owns: the `groups`, `group_add_requests` and `group_daily_additions`
 * tables. A group is visible to its account only while its device is not
 * deleted and the device has not left it.
 * Must never: decide a rule (who may add, how many): that is the service's.
 * The counters are only correct when read and written after `lockForUpdate`
 * in the same transaction; the functions that need it say so.
 */
import type { Selectable, Transaction } from 'kysely';
import type { Database, Db, GroupsTable } from '../store/schema.js';

export type GroupRow = Selectable<GroupsTable>;
/** A group with its device's current number (null while the device is not paired). */
export type GroupWithDevice = GroupRow & { device_phone: string | null };

/** A group as the network reports it, ready to store. */
export interface GroupSnapshot {
  readonly network_id: string;
  readonly subject: string;
  readonly description: string | null;
  /** JSON array of `{phone, name?, role}`. */
  readonly participants: string;
  readonly participant_count: number;
  readonly capacity: number;
  readonly device_admin: string | null;
  /** Settings as reported; null when the network did not report them. */
  readonly only_admins_can_send: number | null;
  readonly only_admins_can_edit: number | null;
  readonly disappearing_seconds: number | null;
  /** Names the group's picture; null: none; absent: the network does not report it (the stored one is kept). */
  readonly picture_id?: string | null;
}

/** The rows an account sees: its groups that the device is still in, of devices not deleted (the one visibility rule). */
function visibleRows(db: Db, accountId: number) {
  return db
    .selectFrom('groups')
    .innerJoin('devices', 'devices.id', 'groups.device_id')
    .where('groups.account_id', '=', accountId)
    .where('groups.left_at', 'is', null)
    .where('devices.deleted_at', 'is', null);
}

/** Those rows as groups with their device's number. */
function visibleGroups(db: Db, accountId: number) {
  return visibleRows(db, accountId).selectAll('groups').select('devices.phone as device_phone');
}

/** Narrows a query to one device's groups when a device is given. */
function ofDevice<Q extends { where: (column: 'groups.device_id', op: '=', value: number) => Q }>(
  query: Q,
  deviceId: number | undefined,
): Q {
  return deviceId === undefined ? query : query.where('groups.device_id', '=', deviceId);
}

export const groupsRepository = {
  /** Inserts or refreshes the (device, network group) pair; its id never changes. Clears `left_at`. */
  upsert: (db: Db, accountId: number, deviceId: number, snapshot: GroupSnapshot, now: number): Promise<GroupRow> =>
    db
      .insertInto('groups')
      .values({
        account_id: accountId,
        device_id: deviceId,
        ...snapshot,
        created_at: now,
        synced_at: now,
        left_at: null,
      })
      .onConflict((oc) =>
        oc.columns(['device_id', 'network_id']).doUpdateSet({ ...snapshot, synced_at: now, left_at: null }),
      )
      .returningAll()
      .executeTakeFirstOrThrow(),

  /** The device left these groups (or the network no longer shows them). */
  markLeft: async (db: Db, deviceId: number, networkIds: readonly string[], now: number): Promise<void> => {
    if (networkIds.length === 0) return;
    await db
      .updateTable('groups')
      .set({ left_at: now })
      .where('device_id', '=', deviceId)
      .where('network_id', 'in', networkIds)
      .where('left_at', 'is', null)
      .execute();
  },

  /** The device's stored row of a group (left or not), for comparing with what the network reports next. */
  stored: (db: Db, deviceId: number, networkId: string): Promise<GroupRow | undefined> =>
    db
      .selectFrom('groups')
      .selectAll()
      .where('device_id', '=', deviceId)
      .where('network_id', '=', networkId)
      .executeTakeFirst(),

  /** Network ids of the groups the device is in, as last stored. */
  currentNetworkIds: async (db: Db, deviceId: number): Promise<string[]> => {
    const rows = await db
      .selectFrom('groups')
      .select('network_id')
      .where('device_id', '=', deviceId)
      .where('left_at', 'is', null)
      .execute();
    return rows.map((row) => row.network_id);
  },

  /** A group of the account whose device is not deleted and is still in it. */
  find: (db: Db, accountId: number, id: number): Promise<GroupWithDevice | undefined> =>
    visibleGroups(db, accountId).where('groups.id', '=', id).executeTakeFirst(),

  /** The account's groups with this network id (one per device in it) whose device is not deleted and is still in it. */
  findByNetworkId: (db: Db, accountId: number, networkId: string, deviceId?: number): Promise<GroupWithDevice[]> =>
    ofDevice(visibleGroups(db, accountId).where('groups.network_id', '=', networkId), deviceId)
      .orderBy('groups.id')
      .limit(100)
      .execute(),

  page: (
    db: Db,
    accountId: number,
    deviceId: number | undefined,
    limit: number,
    offset: number,
  ): Promise<GroupWithDevice[]> =>
    ofDevice(visibleGroups(db, accountId), deviceId).orderBy('groups.id').limit(limit).offset(offset).execute(),

  count: async (db: Db, accountId: number, deviceId: number | undefined): Promise<number> => {
    const row = await ofDevice(visibleRows(db, accountId), deviceId)
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirst();
    return Number(row?.n ?? 0);
  },

  /**
   * Takes the group's row lock for the rest of the transaction (PostgreSQL;
   * SQLite's IMMEDIATE write transaction already excludes every other
   * writer), so the counters below cannot be read by two requests at once.
   */
  lockForUpdate: (db: Transaction<Database>, id: number): Promise<GroupRow | undefined> =>
    db
      .updateTable('groups')
      .set((eb) => ({ synced_at: eb.ref('synced_at') }))
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirst(),

  // --- the one-minute window (under lockForUpdate) -------------------------------------

  /** Forgets requests that no longer count, then counts the rest and finds the oldest. */
  requestWindow: async (
    db: Transaction<Database>,
    groupId: number,
    windowStart: number,
  ): Promise<{ count: number; oldest: number | null }> => {
    await db
      .deleteFrom('group_add_requests')
      .where('group_id', '=', groupId)
      .where('created_at', '<=', windowStart)
      .execute();
    const row = await db
      .selectFrom('group_add_requests')
      .select((eb) => [eb.fn.countAll<number>().as('n'), eb.fn.min<number>('created_at').as('oldest')])
      .where('group_id', '=', groupId)
      .where('created_at', '>', windowStart)
      .executeTakeFirst();
    const oldest = row?.oldest;
    return { count: Number(row?.n ?? 0), oldest: oldest === null || oldest === undefined ? null : Number(oldest) };
  },

  recordRequest: async (db: Transaction<Database>, groupId: number, now: number): Promise<void> => {
    await db.insertInto('group_add_requests').values({ group_id: groupId, created_at: now }).execute();
  },

  // --- the daily budget (under lockForUpdate) ---------------------------------------------

  usedOn: async (db: Transaction<Database>, groupId: number, day: number): Promise<number> => {
    const row = await db
      .selectFrom('group_daily_additions')
      .select('used')
      .where('group_id', '=', groupId)
      .where('day', '=', day)
      .executeTakeFirst();
    return Number(row?.used ?? 0);
  },

  /** Adds `delta` (negative to give back) to the day's counter; earlier days are dropped, nothing reads them. */
  addUsed: async (db: Transaction<Database>, groupId: number, day: number, delta: number): Promise<void> => {
    await db.deleteFrom('group_daily_additions').where('group_id', '=', groupId).where('day', '<', day).execute();
    await db
      .insertInto('group_daily_additions')
      .values({ group_id: groupId, day, used: Math.max(0, delta) })
      .onConflict((oc) =>
        oc.columns(['group_id', 'day']).doUpdateSet((eb) => ({ used: eb('group_daily_additions.used', '+', delta) })),
      )
      .execute();
  },
};
