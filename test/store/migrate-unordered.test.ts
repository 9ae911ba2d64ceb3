// src/store/migrate.ts: migrations are named by a prefix per piece of work (008d, 008f, ...) and land
// on main in any order, so a store may have run a later-named migration before an earlier-named one
// existed. Such a store still starts: the earlier one runs then, instead of the migrator refusing.
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/store/store.js';
import { newStoreLocation, noStoreAvailable, type StoreLocation } from '../helpers/gateway.js';

describe.skipIf(noStoreAvailable)('migrations landing out of name order', () => {
  let location: StoreLocation | undefined;
  let store: Store | undefined;
  afterEach(async () => {
    await store?.close();
    await location?.drop();
  });

  it('a store that ran 008f but not 008d runs 008d when it next starts', async () => {
    location = await newStoreLocation({ migrated: false });
    store = openStore({ databaseUrl: location.databaseUrl, dataDir: location.dataDir });
    expect(await store.migrate()).toContain('008f-sandbox-accounts');
    // Undo 008d as if it had never existed when this store was migrated (008f stays applied).
    const db = store.db;
    await sql`drop index webhook_events_skipped`.execute(db);
    for (const [table, column] of [
      ['devices', 'webhook_format'],
      ['devices', 'webhook_reply'],
      ['webhook_attempts', 'format'],
      ['webhook_attempts', 'reply'],
    ] as const) {
      await db.schema.alterTable(table).dropColumn(column).execute();
    }
    await sql`delete from kysely_migration where name = '008d-webhook-formats'`.execute(db);
    await store.close();

    store = openStore({ databaseUrl: location.databaseUrl, dataDir: location.dataDir });
    expect(await store.migrate()).toEqual(['008d-webhook-formats']);
    const columns = await store.db.selectFrom('devices').select(['webhook_format', 'webhook_reply']).execute();
    expect(columns).toEqual([]);
  });
});
