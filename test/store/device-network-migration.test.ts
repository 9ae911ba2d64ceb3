// Migration 009a (docs/networks-per-device.md): devices paired before it get the network
// their stored session came from (`sbx1.` the sandbox's, `wa1.` WhatsApp's);
// a device with no session, or one of neither form, gets none.
import { describe, expect, it } from 'vitest';
import { up } from '../../src/store/migrations/009a-device-network.js';
import { noStoreAvailable } from '../helpers/gateway.js';
import { migrationStores } from '../helpers/migration-store.js';

describe.skipIf(noStoreAvailable)('migration 009a-device-network', () => {
  const stores = migrationStores();

  it('backfills the network of paired devices from their sessions', async () => {
    const { db } = await stores.open();
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
