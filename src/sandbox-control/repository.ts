/**
 * SQL for the sandbox control API's account checks: which devices, numbers
 * and messages belong to the calling account.
 *
 * Owns: read-only lookups over `devices` and `messages` for the sandbox
 * control service. Deleted devices count for nobody.
 * Must never: write, or decide what an account may do (the service does).
 */
import type { Db } from '../store/schema.js';

/** `in` lists are cut to this size: SQLite's bound-parameter limit is far above it. */
const CHUNK = 500;

export const sandboxControlRepository = {
  /** The account's live devices, with what the network knows them by. */
  devicesOf: (db: Db, accountId: number) =>
    db
      .selectFrom('devices')
      .select(['id', 'phone', 'expected_phone', 'network_session'])
      .where('account_id', '=', accountId)
      .where('deleted_at', 'is', null)
      .execute(),

  /** Those of `phones` that are the number (paired, or given at creation) of another account's live device. */
  numbersOfOtherAccounts: async (db: Db, accountId: number, phones: readonly string[]): Promise<Set<string>> => {
    const found = new Set<string>();
    for (let i = 0; i < phones.length; i += CHUNK) {
      const list = phones.slice(i, i + CHUNK);
      const rows = await db
        .selectFrom('devices')
        .select(['phone', 'expected_phone'])
        .where('account_id', '<>', accountId)
        .where('deleted_at', 'is', null)
        .where((eb) => eb.or([eb('phone', 'in', list), eb('expected_phone', 'in', list)]))
        .execute();
      for (const row of rows) {
        if (row.phone !== null && list.includes(row.phone)) found.add(row.phone);
        if (row.expected_phone !== null && list.includes(row.expected_phone)) found.add(row.expected_phone);
      }
    }
    return found;
  },

  /** Those of `ids` that are outgoing messages (or queued actions: messages/actions.ts) of the account. */
  ownOutgoingIds: async (db: Db, accountId: number, ids: readonly string[]): Promise<Set<string>> => {
    const found = new Set<string>();
    for (let i = 0; i < ids.length; i += CHUNK) {
      const rows = await db
        .selectFrom('messages')
        .select('id')
        .where('account_id', '=', accountId)
        .where('direction', 'in', ['outgoing', 'action'])
        .where('id', 'in', ids.slice(i, i + CHUNK))
        .execute();
      for (const row of rows) found.add(row.id);
    }
    return found;
  },
};
