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
  /** Created as a sandbox account (the stored flag; the service decides what it means on this gateway). */
  sandbox: boolean;
  created_at: number;
}

const ACCOUNT_COLUMNS = ['id', 'name', 'max_devices', 'sandbox', 'created_at'] as const;

type StoredAccount = Omit<AccountRow, 'sandbox'> & { sandbox: number };

/** Booleans are stored as 0/1 integers. */
const account = (row: StoredAccount): AccountRow => ({ ...row, sandbox: row.sandbox === 1 });
const maybeAccount = (row: StoredAccount | undefined): AccountRow | undefined =>
  row === undefined ? undefined : account(row);

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

  findByName: async (db: Db, name: string): Promise<AccountRow | undefined> =>
    maybeAccount(await db.selectFrom('accounts').select(ACCOUNT_COLUMNS).where('name', '=', name).executeTakeFirst()),

  findById: async (db: Db, id: number): Promise<AccountRow | undefined> =>
    maybeAccount(await db.selectFrom('accounts').select(ACCOUNT_COLUMNS).where('id', '=', id).executeTakeFirst()),

  list: async (db: Db): Promise<AccountRow[]> =>
    (await db.selectFrom('accounts').select(ACCOUNT_COLUMNS).orderBy('id').execute()).map(account),

  insert: async (
    db: Db,
    name: string,
    maxDevices: number,
    now: number,
    options: { readonly sandbox?: boolean } = {},
  ): Promise<AccountRow> =>
    account(
      await db
        .insertInto('accounts')
        .values({
          name,
          max_devices: maxDevices,
          sandbox: options.sandbox === true ? 1 : 0,
          created_at: now,
          updated_at: now,
        })
        .returning(ACCOUNT_COLUMNS)
        .executeTakeFirstOrThrow(),
    ),

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
  lockForUpdate: async (db: Transaction<Database>, id: number): Promise<AccountRow | undefined> =>
    maybeAccount(
      await db
        .updateTable('accounts')
        .set((eb) => ({ max_devices: eb.ref('max_devices') }))
        .where('id', '=', id)
        .returning(ACCOUNT_COLUMNS)
        .executeTakeFirst(),
    ),
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

  /** Counts one more revocation; in the revoking transaction, so readers see both or neither. */
  bumpRevocations: async (db: Db): Promise<void> => {
    await db
      .updateTable('token_revocations')
      .set((eb) => ({ revision: eb('revision', '+', 1) }))
      .where('id', '=', 1)
      .execute();
  },

  /** How many revocations the store has counted (one primary-key read). */
  revocationRevision: async (db: Db): Promise<number> => {
    const row = await db.selectFrom('token_revocations').select('revision').where('id', '=', 1).executeTakeFirst();
    return Number(row?.revision ?? 0);
  },

  touch: async (db: Db, id: number, now: number): Promise<void> => {
    await db.updateTable('api_tokens').set({ last_used_at: now }).where('id', '=', id).execute();
  },
};
