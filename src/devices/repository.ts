/**
 * SQL for devices.
 *
 * Owns: the `devices` table. Deleted devices stay as rows (their messages
 * remain queryable) but are invisible to every query here except by-id lookups
 * that ask for them.
 * Must never: decide a rule; that is the service's.
 */
import type { Kysely, Selectable, Transaction } from 'kysely';
import type { Database, DevicesTable } from '../store/schema.js';

type Db = Kysely<Database> | Transaction<Database>;
export type DeviceRow = Selectable<DevicesTable>;

export const devicesRepository = {
  countActive: async (db: Db, accountId: number): Promise<number> => {
    const row = await db
      .selectFrom('devices')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('account_id', '=', accountId)
      .where('deleted_at', 'is', null)
      .executeTakeFirst();
    return Number(row?.n ?? 0);
  },

  insert: (db: Db, values: Omit<DeviceRow, 'id'>): Promise<DeviceRow> =>
    db.insertInto('devices').values(values).returningAll().executeTakeFirstOrThrow(),

  page: (db: Db, accountId: number, limit: number, offset: number): Promise<DeviceRow[]> =>
    db
      .selectFrom('devices')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('deleted_at', 'is', null)
      .orderBy('id')
      .limit(limit)
      .offset(offset)
      .execute(),

  find: (db: Db, accountId: number, id: number): Promise<DeviceRow | undefined> =>
    db
      .selectFrom('devices')
      .selectAll()
      .where('id', '=', id)
      .where('account_id', '=', accountId)
      .where('deleted_at', 'is', null)
      .executeTakeFirst(),

  findByPhone: (db: Db, accountId: number, phone: string): Promise<DeviceRow | undefined> =>
    db
      .selectFrom('devices')
      .selectAll()
      .where('account_id', '=', accountId)
      // A device created for a number is known by it before it pairs.
      .where((eb) =>
        eb.or([eb('phone', '=', phone), eb.and([eb('phone', 'is', null), eb('expected_phone', '=', phone)])]),
      )
      .where('deleted_at', 'is', null)
      .orderBy('id', 'desc')
      .executeTakeFirst(),

  findById: (db: Db, id: number): Promise<DeviceRow | undefined> =>
    db.selectFrom('devices').selectAll().where('id', '=', id).executeTakeFirst(),

  update: (
    db: Db,
    accountId: number,
    id: number,
    changes: Partial<Omit<DeviceRow, 'id' | 'account_id'>>,
  ): Promise<DeviceRow | undefined> =>
    db
      .updateTable('devices')
      .set(changes)
      .where('id', '=', id)
      .where('account_id', '=', accountId)
      .where('deleted_at', 'is', null)
      .returningAll()
      .executeTakeFirst(),
};
