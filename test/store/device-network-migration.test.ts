// Migration 009a (docs/networks-per-device.md): devices paired before it get the network
// their stored session came from (`sbx1.` the sandbox's, `wa1.` WhatsApp's);
// a device with no session, or one of neither form, gets none.
import { join } from 'node:path';
import { Kysely } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { up } from '../../src/store/migrations/009a-device-network.js';
import { openPostgres } from '../../src/store/postgres.js';
import { openSqlite } from '../../src/store/sqlite.js';
import { newStoreLocation, noStoreAvailable, type StoreLocation } from '../helpers/gateway.js';

describe.skipIf(noStoreAvailable)('migration 009a-device-network', () => {
  const cleanup: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const step of cleanup.splice(0).reverse()) await step();
  });

  function open(location: StoreLocation): Kysely<any> {
    const dialect =
      location.databaseUrl === null
        ? openSqlite(join(location.dataDir, 'gateway.sqlite'))
        : openPostgres(location.databaseUrl).dialect;
    return new Kysely<any>({ dialect });
  }

  it('backfills the network of paired devices from their sessions', async () => {
    const location = await newStoreLocation({ migrated: false });
    cleanup.push(() => location.drop());
    const db = open(location);
    cleanup.push(() => db.destroy());
    // The columns of `devices` the migration reads, as the earlier migrations left them.
    await db.schema
      .createTable('devices')
      .addColumn('id', 'integer', (c) => c.primaryKey())
      .addColumn('network_session', 'text')
      .execute();
    await db
      .insertInto('devices')
      .values([
        { id: 1, network_session: 'sbx1.abc' },
        { id: 2, network_session: 'wa1.0f6c' },
        { id: 3, network_session: null },
        { id: 4, network_session: 'something-else' },
      ])
      .execute();

    await up(db);

    const rows = await db.selectFrom('devices').select(['id', 'network']).orderBy('id').execute();
    expect(rows).toEqual([
      { id: 1, network: 'sandbox' },
      { id: 2, network: 'whatsapp' },
      { id: 3, network: null },
      { id: 4, network: null },
    ]);
  });
});
