// The PostgreSQL test stores of one test process are used again (test/helpers/pg-schema-pool.ts): a dropped store
// comes back to the next test emptied to the template's rows and sequence values, and one whose definition a test
// changed is dropped instead. What every other PostgreSQL test's isolation rests on. PostgreSQL only, and only where
// the run made the template's dump (without pg_dump each store is a copied database, not pooled).
import { afterEach, describe, expect, inject, it } from 'vitest';
import pg from 'pg';
import {
  TEST_TOKEN,
  newStoreLocation,
  noStoreAvailable,
  startGateway,
  storeKind,
  type StoreLocation,
} from '../helpers/gateway.js';

const pooled = storeKind === 'postgres' && !noStoreAvailable && inject('pgTemplate')?.dump != null;

function schemaOf(location: StoreLocation): string {
  const options = new URL(location.databaseUrl!).searchParams.get('options') ?? '';
  return /search_path=(\w+)/.exec(options)![1]!;
}

async function onStore<T>(location: StoreLocation, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: location.databaseUrl! });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

const count = async (client: pg.Client, table: string) =>
  Number((await client.query<{ n: string }>(`select count(*) as n from ${table}`)).rows[0]!.n);

describe.runIf(pooled)('test stores used again on PostgreSQL', () => {
  const held: StoreLocation[] = [];
  afterEach(async () => {
    for (const location of held.splice(0)) await location.drop();
  });

  it('a dropped store comes back to the next test with the template’s rows and sequences, and nothing of the last', async () => {
    const first = await newStoreLocation();
    const template = await onStore(first, async (c) => ({
      migrations: await count(c, 'kysely_migration'),
      accounts: await count(c, 'accounts'),
    }));
    const gw = await startGateway({ location: first });
    for (const name of ['one', 'two', 'three']) {
      const res = await gw.request('POST', '/devices', { package: 'BETA', name }, TEST_TOKEN);
      expect(res.status).toBe(201);
    }
    await gw.close({ keepStore: true });
    await onStore(first, async (c) => expect(await count(c, 'devices')).toBe(3));
    await first.drop();

    const second = await newStoreLocation();
    held.push(second);
    expect(schemaOf(second)).toBe(schemaOf(first));
    await onStore(second, async (c) => {
      expect(await count(c, 'devices')).toBe(0);
      expect(await count(c, 'accounts')).toBe(template.accounts);
      expect(await count(c, 'kysely_migration')).toBe(template.migrations);
      const { rows } = await c.query(`select last_value, is_called from devices_id_seq`);
      expect({ last: Number(rows[0].last_value), called: rows[0].is_called }).toEqual({ last: 1, called: false });
    });
    // A gateway on it starts as on a fresh store: its first device is number 1.
    const again = await startGateway({ location: second });
    const res = await again.request('POST', '/devices', { package: 'BETA', name: 'first again' }, TEST_TOKEN);
    expect(res.body.data.id).toBe(1);
    await again.close({ keepStore: true });
  });

  it('a store whose definition a test changed is dropped, never handed out again', async () => {
    const changed = await newStoreLocation();
    await onStore(changed, (c) => c.query(`alter table messages set (autovacuum_enabled = false)`));
    await changed.drop();
    const next = await newStoreLocation();
    held.push(next);
    expect(schemaOf(next)).not.toBe(schemaOf(changed));
    const left = await onStore(next, (c) =>
      c.query(`select count(*)::int as n from pg_namespace where nspname = $1`, [schemaOf(changed)]),
    );
    expect(left.rows[0].n).toBe(0);
  });

  it('a store dropped twice is handed out once', async () => {
    const location = await newStoreLocation();
    await Promise.all([location.drop(), location.drop()]);
    const a = await newStoreLocation();
    const b = await newStoreLocation();
    held.push(a, b);
    expect(schemaOf(a)).not.toBe(schemaOf(b));
  });
});
