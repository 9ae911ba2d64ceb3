/**
 * SQL for accounts and API tokens.
 *
 * Owns: reading and writing the `accounts` and `api_tokens` tables.
 * Must never: decide a rule (limits, who may do what); that is the service's.
 */
import type { Transaction } from 'kysely';
import type { Database, Db } from '../store/schema.js';

export interface AccountRow {
  id: number;
  name: string;
  max_devices: number;
  created_at: number;
}

export interface TokenRow {
  id: number;
  name: string;
  prefix: string;
  created_at: number;
  last_used_at: number | null;
}

export const accountsRepository = {
  countAccounts: async (db: Db): Promise<number> => {
    const row = await db
      .selectFrom('accounts')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirst();
    return Number(row?.n ?? 0);
  },

  findByName: (db: Db, name: string): Promise<AccountRow | undefined> =>
    db
      .selectFrom('accounts')
      .select(['id', 'name', 'max_devices', 'created_at'])
      .where('name', '=', name)
      .executeTakeFirst(),

  findById: (db: Db, id: number): Promise<AccountRow | undefined> =>
    db
      .selectFrom('accounts')
      .select(['id', 'name', 'max_devices', 'created_at'])
      .where('id', '=', id)
      .executeTakeFirst(),

  list: (db: Db): Promise<AccountRow[]> =>
    db.selectFrom('accounts').select(['id', 'name', 'max_devices', 'created_at']).orderBy('id').execute(),

  insert: async (db: Db, name: string, maxDevices: number, now: number): Promise<AccountRow> => {
    const row = await db
      .insertInto('accounts')
      .values({ name, max_devices: maxDevices, created_at: now, updated_at: now })
      .returning(['id', 'name', 'max_devices', 'created_at'])
      .executeTakeFirstOrThrow();
    return row;
  },

  setMaxDevices: async (db: Db, name: string, maxDevices: number, now: number): Promise<boolean> => {
    const result = await db
      .updateTable('accounts')
      .set({ max_devices: maxDevices, updated_at: now })
      .where('name', '=', name)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  },

  /**
   * Takes the account's row lock for the rest of the transaction (PostgreSQL;
   * SQLite's write transaction already excludes others), so checks such as the
   * device limit cannot race. Returns the account, or undefined.
   */
  lockForUpdate: (db: Transaction<Database>, id: number): Promise<AccountRow | undefined> =>
    db
      .updateTable('accounts')
      .set((eb) => ({ max_devices: eb.ref('max_devices') }))
      .where('id', '=', id)
      .returning(['id', 'name', 'max_devices', 'created_at'])
      .executeTakeFirst(),
};

export const tokensRepository = {
  insert: (db: Db, accountId: number, name: string, prefix: string, hash: string, now: number): Promise<TokenRow> =>
    db
      .insertInto('api_tokens')
      .values({ account_id: accountId, name, prefix, token_hash: hash, created_at: now })
      .returning(['id', 'name', 'prefix', 'created_at', 'last_used_at'])
      .executeTakeFirstOrThrow(),

  findActiveByHash: (db: Db, hash: string): Promise<{ id: number; account_id: number } | undefined> =>
    db
      .selectFrom('api_tokens')
      .select(['id', 'account_id'])
      .where('token_hash', '=', hash)
      .where('revoked_at', 'is', null)
      .executeTakeFirst(),

  existsByHash: async (db: Db, hash: string): Promise<boolean> =>
    (await db.selectFrom('api_tokens').select('id').where('token_hash', '=', hash).executeTakeFirst()) !== undefined,

  listActive: (db: Db, accountId: number): Promise<TokenRow[]> =>
    db
      .selectFrom('api_tokens')
      .select(['id', 'name', 'prefix', 'created_at', 'last_used_at'])
      .where('account_id', '=', accountId)
      .where('revoked_at', 'is', null)
      .orderBy('id')
      .execute(),

  revoke: async (db: Db, accountId: number, id: number, now: number): Promise<boolean> => {
    const result = await db
      .updateTable('api_tokens')
      .set({ revoked_at: now })
      .where('id', '=', id)
      .where('account_id', '=', accountId)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  },

  touch: async (db: Db, id: number, now: number): Promise<void> => {
    await db.updateTable('api_tokens').set({ last_used_at: now }).where('id', '=', id).execute();
  },
};
