// PostgreSQL runs a statement used again as a named prepared statement
// (src/store/postgres.ts). A table changed under a named `select *` (another
// node's migration during a rolling upgrade) makes the server refuse the
// plan it cached; the text then runs unnamed, and answers with the new shape.
// PostgreSQL only.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Kysely, sql } from 'kysely';
import { openPostgres } from '../../src/store/postgres.js';
import { newStoreLocation, noStoreAvailable, storeKind, type StoreLocation } from '../helpers/gateway.js';

describe.skipIf(storeKind !== 'postgres' || noStoreAvailable)('named prepared statements', () => {
  let location: StoreLocation;
  let db: Kysely<any>;

  beforeAll(async () => {
    location = await newStoreLocation();
    // One connection, so every statement meets the plans this connection prepared.
    db = new Kysely<any>({ dialect: openPostgres(location.databaseUrl!, { poolSize: 1 }).dialect });
    await sql`create table named_probe (id integer primary key, a text)`.execute(db);
    await sql`insert into named_probe values (1, 'x')`.execute(db);
  });
  afterAll(async () => {
    await db?.destroy();
    await location?.drop();
  });

  const probe = (id: number) => sql<Record<string, unknown>>`select * from named_probe where id = ${id}`.execute(db);

  it('are prepared once per connection and used again', async () => {
    for (let i = 0; i < 3; i++) expect((await probe(1)).rows).toEqual([{ id: 1, a: 'x' }]);
    const { rows } = await sql<{ n: number }>`
      select count(*)::int as n from pg_prepared_statements where statement like 'select * from named_probe%'
    `.execute(db);
    expect(rows[0]!.n).toBe(1);
  });

  it('a table changed under one: at most one refusal, then the statement runs unnamed with the new column', async () => {
    await sql`alter table named_probe add column b text default 'y'`.execute(db);
    const first = await probe(1).then(
      (result) => result.rows,
      (error: { code?: string }) => error.code,
    );
    // The server either replans it silently or refuses the cached plan ('0A000'); nothing else.
    if (typeof first === 'string') expect(first).toBe('0A000');
    else expect(first).toEqual([{ id: 1, a: 'x', b: 'y' }]);
    for (let i = 0; i < 3; i++) expect((await probe(1)).rows).toEqual([{ id: 1, a: 'x', b: 'y' }]);
  });
});
