// The PostgreSQL databases of a test run: the URL of a database (and schema) on
// the test server, one statement batch on a short-lived connection, and a
// test's store made from the run's migrated template (test/helpers/postgres-global.ts
// makes the template): a schema of its own in its worker's database, made by
// the template schema's dump (pg_dump of what the migrations left, renamed), or,
// where the run has no dump, a copy of the whole template database. Either holds
// exactly what migrating a fresh schema leaves.
// Must never: keep a connection open to the template (a copy needs none open),
// or drop a database or schema other than one it made.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { SchemaPool } from './pg-schema-pool.js';

/** The one schema of the template database; every copy renames it to a name of its own. */
export const TEMPLATE_SCHEMA = 'gw_template';

/** The URL of `database` on the server `admin` names, with `schema` first on the search path when given. */
export function databaseUrlOf(admin: string, database: string, schema?: string): string {
  const url = new URL(admin);
  url.pathname = `/${database}`;
  if (schema !== undefined) url.searchParams.set('options', `-c search_path=${schema}`);
  return url.toString();
}

/** Runs `work` on a connection of its own to `url`, closed afterwards whatever happens; answers what it answered. */
export async function onServer<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

export interface MigratedStore {
  /** Its URL: its database, with its schema first on the search path. */
  readonly url: string;
  drop(): Promise<void>;
}

/**
 * A new database copied from `template` (which no connection may hold open), its schema renamed to
 * `gw_test_<random>` as a fresh test schema is named. Copying is a file-level copy on the server: about a tenth
 * of a second, against one and a half to two seconds for running the migrations.
 */
export async function migratedCopy(admin: string, template: string): Promise<MigratedStore> {
  const suffix = randomBytes(6).toString('hex');
  // Named after the template, so the run's teardown finds a copy a crashed test left.
  const database = `${template}_${suffix}`;
  const schema = `gw_test_${suffix}`;
  await onServer(admin, (c) => c.query(`create database ${database} template ${template}`));
  try {
    await onServer(databaseUrlOf(admin, database), (c) =>
      c.query(`alter schema ${TEMPLATE_SCHEMA} rename to ${schema}`),
    );
  } catch (error) {
    await onServer(admin, (c) => c.query(`drop database if exists ${database}`)).catch(() => undefined);
    throw error;
  }
  return {
    url: databaseUrlOf(admin, database, schema),
    drop: async () => {
      await onServer(admin, (c) => c.query(`drop database if exists ${database}`));
    },
  };
}

/** The dump's statements for a schema named `schema`: the template schema's name replaced, psql's own commands left out. */
export function schemaFromDump(dump: string, schema: string): string {
  return dump
    .split('\n')
    .filter((line) => !line.startsWith('\\'))
    .join('\n')
    .replace(new RegExp(`\\b${TEMPLATE_SCHEMA}\\b`, 'g'), schema);
}

/**
 * This test process's database for schemas made from the dump: one a process (a worker runs its files one after
 * another), named after the template so the run's teardown drops it. Kept on `globalThis`, as a worker that shares
 * its modules between files may still evaluate this module again.
 */
function workerDatabase(admin: string, template: string): Promise<string> {
  const held = globalThis as { gwWorkerDatabases?: Map<string, Promise<string>> };
  held.gwWorkerDatabases ??= new Map();
  let made = held.gwWorkerDatabases.get(template);
  if (made === undefined) {
    const database = `${template}_w${randomBytes(4).toString('hex')}`;
    made = onServer(admin, (c) => c.query(`create database ${database}`)).then(() => database);
    made.catch(() => held.gwWorkerDatabases?.delete(template));
    held.gwWorkerDatabases.set(template, made);
  }
  return made;
}

/**
 * The URL of this test process's database, for schemas a test makes itself (an empty store, a migration test's
 * churn). They are dropped with the run's databases, so the rows they leave in PostgreSQL's catalogs go with them,
 * also on a server that runs without autovacuum (the machine's own does): made in the server's `postgres`
 * database, each run left about 40,000 dead catalog rows there for good.
 */
export async function processDatabaseUrl(admin: string, template: string): Promise<string> {
  return databaseUrlOf(admin, await workerDatabase(admin, template));
}

/**
 * A schema `gw_test_<random>` in this process's database: one an earlier test of the process dropped, emptied
 * (pg-schema-pool.ts), or a new one made by the template schema's dump in one round trip:
 * the tables, indexes, functions, triggers and rows the migrations left (their own bookkeeping included). A tenth of
 * the server's work of copying the template database (docs/testing.md, Where the suite's time goes). The gateway
 * names its notification channel and advisory locks after its schema, so stores in one database do not meet.
 */
export async function migratedSchema(admin: string, template: string, dump: string): Promise<MigratedStore> {
  const database = await workerDatabase(admin, template);
  const url = databaseUrlOf(admin, database);
  const pool = new SchemaPool((work) => onServer(url, work), database, dump, TEMPLATE_SCHEMA);
  const fromDump = async (): Promise<string> => {
    const made = `gw_test_${randomBytes(6).toString('hex')}`;
    await onServer(url, (c) => c.query(schemaFromDump(dump, made)));
    await pool.made(made);
    return made;
  };
  const schema = pool.take() ?? (await fromDump());
  let released: Promise<void> | null = null;
  return {
    url: databaseUrlOf(admin, database, schema),
    // Emptied for the next store of this process (pg-schema-pool.ts), or dropped; once, however often it is asked.
    drop: () => (released ??= pool.release(schema)),
  };
}
