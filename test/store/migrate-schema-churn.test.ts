// src/store/migrate.ts on PostgreSQL: the migrator's check for its bookkeeping
// tables lists the tables of every schema in the database, so another process
// dropping its own schema at that moment (other gateways' test schemas, a
// tenant being removed) must not fail a start-up. Schemas full of tables are
// created and dropped in a tight loop while fresh stores migrate. One loop a
// test: the listing's check below fails at once without the narrowed listing
// with one as with three (three cost the server 9 s of CPU a run).
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { Kysely, PostgresDialect } from 'kysely';
import { introspectingOwnSchema } from '../../src/store/own-schema-introspector.js';
import { openStore } from '../../src/store/store.js';
import { newStoreLocation, noStoreAvailable, scratchDatabaseUrl, storeKind } from '../helpers/gateway.js';

describe.skipIf(noStoreAvailable || storeKind !== 'postgres')('migrations while other schemas are dropped', () => {
  // The database the empty stores below are made in (this test process's), so the churn is beside them.
  const database = storeKind === 'postgres' && !noStoreAvailable ? scratchDatabaseUrl() : Promise.resolve('');
  const churnPrefix = `gw_churn_${process.pid}_`;
  let churning = true;

  afterAll(async () => {
    churning = false;
    const client = new pg.Client({ connectionString: await database });
    await client.connect();
    const { rows } = await client.query<{ nspname: string }>(`select nspname from pg_namespace where nspname like $1`, [
      `${churnPrefix}%`,
    ]);
    for (const { nspname } of rows) await client.query(`drop schema if exists ${nspname} cascade`);
    await client.end();
  });

  async function churn(worker: number): Promise<void> {
    const client = new pg.Client({ connectionString: await database });
    await client.connect();
    try {
      for (let round = 0; churning; round++) {
        const schema = `${churnPrefix}${worker}_${round}`;
        await client.query(`create schema ${schema}`);
        for (let t = 0; t < 8; t++) await client.query(`create table ${schema}.t${t} (id serial primary key, v text)`);
        await client.query(`drop schema ${schema} cascade`);
      }
    } finally {
      await client.end();
    }
  }

  it('every store opens and migrates', async () => {
    const churners = [churn(1)];
    try {
      for (let i = 0; i < 8; i++) {
        const location = await newStoreLocation({ migrated: false });
        try {
          const store = openStore({ databaseUrl: location.databaseUrl, dataDir: location.dataDir });
          try {
            expect((await store.migrate()).length).toBeGreaterThan(0);
          } finally {
            await store.close();
          }
        } finally {
          await location.drop();
        }
      }
    } finally {
      churning = false;
      await Promise.all(churners);
    }
  });

  it("the migrator's listing of tables names its own schema's only and never fails on another's drop", async () => {
    // Without the narrowed listing, Kysely's walks every schema and fails "schema … does not exist" here within
    // a few hundred rounds; start-up then leaned on retries, which a loaded machine could run out of.
    churning = true;
    const churners = [churn(2)];
    const location = await newStoreLocation({ migrated: false });
    const store = openStore({ databaseUrl: location.databaseUrl, dataDir: location.dataDir });
    const db = new Kysely<unknown>({
      dialect: introspectingOwnSchema(
        new PostgresDialect({ pool: new pg.Pool({ connectionString: location.databaseUrl!, max: 1 }) }),
      ),
    });
    try {
      await store.migrate();
      const schema = new URL(location.databaseUrl!).searchParams.get('options')!.split('=')[1]!;
      for (let round = 0; round < 400; round++) {
        const tables = await db.introspection.getTables({ withInternalKyselyTables: true });
        expect(new Set(tables.map((table) => table.schema))).toEqual(new Set([schema]));
        expect(tables.map((table) => table.name)).toEqual(expect.arrayContaining(['kysely_migration', 'devices']));
      }
    } finally {
      churning = false;
      await Promise.all(churners);
      await db.destroy();
      await store.close();
      await location.drop();
    }
  });
});
