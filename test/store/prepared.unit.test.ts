// src/store/prepared.ts (and BulkInsert, cached alike): a statement compiled once binds each call’s own
// arguments where they belong (constants stay), compiles per dialect, and
// refuses a builder that leaves an argument out. Run on a real SQLite
// database; PostgreSQL's SQL is checked through Kysely's compile-only driver.
import {
  DummyDriver,
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type LogEvent,
} from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateToLatest } from '../../src/store/migrate.js';
import { sqliteMigrationDialect } from '../../src/store/migrations/helpers.js';
import { BulkInsert } from '../../src/store/bulk-insert.js';
import { prepared } from '../../src/store/prepared.js';
import type { Database } from '../../src/store/schema.js';
import { openSqlite } from '../../src/store/sqlite.js';

const setStatus = prepared(3, (db, id: number, at: number, status: string) =>
  db
    .updateTable('accounts')
    .set((eb) => ({ name: status, created_at: eb.fn.coalesce(eb.val(at), eb.val(at)) }))
    .where('id', '=', id)
    .where('name', '!=', 'frozen')
    .returning(['id', 'name', 'created_at']),
);

/** PostgreSQL's SQL without a server: Kysely's compile-only driver, logging what would run. */
function compileOnlyPostgres(log: LogEvent[]): Kysely<Database> {
  return new Kysely<Database>({
    dialect: {
      createAdapter: () => new PostgresAdapter(),
      createDriver: () => new DummyDriver(),
      createIntrospector: (k) => new PostgresIntrospector(k),
      createQueryCompiler: () => new PostgresQueryCompiler(),
    },
    log: (event) => void log.push(event),
  });
}

describe('prepared statements', () => {
  let db: Kysely<Database>;
  const logged: LogEvent[] = [];

  beforeAll(async () => {
    db = new Kysely<Database>({ dialect: openSqlite(':memory:'), log: (event) => void logged.push(event) });
    await migrateToLatest(db as Kysely<unknown>, sqliteMigrationDialect);
    await db
      .insertInto('accounts')
      .values([
        { id: 1, name: 'one', max_devices: 1, created_at: 10, updated_at: 10 },
        { id: 2, name: 'two', max_devices: 1, created_at: 20, updated_at: 20 },
        { id: 3, name: 'frozen', max_devices: 1, created_at: 30, updated_at: 30 },
      ])
      .execute();
  });
  afterAll(() => db?.destroy());

  it('binds each call’s arguments where they were compiled, an argument used twice in both places', async () => {
    logged.length = 0;
    expect(await setStatus(db, 1, 111, 'first')).toEqual([{ id: 1, name: 'first', created_at: 111 }]);
    expect(await setStatus(db, 2, 222, 'second')).toEqual([{ id: 2, name: 'second', created_at: 222 }]);
    expect(logged.map((event) => event.query.parameters)).toEqual([
      ['first', 111, 111, 1, 'frozen'],
      ['second', 222, 222, 2, 'frozen'],
    ]);
    expect(logged[0]!.query.sql).toBe(logged[1]!.query.sql);
    const stored = await db.selectFrom('accounts').selectAll().orderBy('id').execute();
    expect(stored.map((row) => [row.id, row.name, row.created_at])).toEqual([
      [1, 'first', 111],
      [2, 'second', 222],
      [3, 'frozen', 30],
    ]);
  });

  it('keeps the constants compiled in: a row the statement excludes is not touched', async () => {
    expect(await setStatus(db, 3, 333, 'thawed')).toEqual([]);
    expect(await db.selectFrom('accounts').select('name').where('id', '=', 3).executeTakeFirst()).toEqual({
      name: 'frozen',
    });
  });

  it('compiles once per dialect: the same statement gets PostgreSQL’s own SQL there', async () => {
    const pgLog: LogEvent[] = [];
    const pg = compileOnlyPostgres(pgLog);
    await setStatus(pg, 7, 777, 'pg');
    expect(pgLog[0]!.query.sql).toBe(
      'update "accounts" set "name" = $1, "created_at" = coalesce($2, $3) where "id" = $4 and "name" != $5 returning "id", "name", "created_at"',
    );
    expect(pgLog[0]!.query.parameters).toEqual(['pg', 777, 777, 7, 'frozen']);
    // And SQLite keeps its own.
    logged.length = 0;
    await setStatus(db, 1, 1, 'again');
    expect(logged[0]!.query.sql).toContain('= ?');
    await pg.destroy();
  });

  it('BulkInsert, compiled the same way, also keeps one set of statements per dialect', async () => {
    const insert = new BulkInsert<
      'accounts',
      { name: string; max_devices: number; created_at: number; updated_at: number }
    >('accounts', ['name', 'max_devices', 'created_at', 'updated_at']);
    logged.length = 0;
    await insert.run(db, [{ name: 'bulk', max_devices: 2, created_at: 5, updated_at: 6 }]);
    expect(logged[0]!.query.sql).toMatch(/values \(\?, \?, \?, \?\)$/);
    const pgLog: LogEvent[] = [];
    const pg = compileOnlyPostgres(pgLog);
    await insert.run(pg, [{ name: 'bulk', max_devices: 2, created_at: 5, updated_at: 6 }]);
    expect(pgLog[0]!.query.sql).toMatch(/values \(\$1, \$2, \$3, \$4\)$/);
    expect(pgLog[0]!.query.parameters).toEqual(['bulk', 2, 5, 6]);
    await pg.destroy();
  });

  it('refuses a builder that leaves an argument out', async () => {
    const careless = prepared(2, (db, id: number, _unused: string) =>
      db.selectFrom('accounts').selectAll().where('id', '=', id),
    );
    await expect(careless(db, 1, 'x')).rejects.toThrow('prepared statement binds 1 of its 2 arguments');
  });
});
