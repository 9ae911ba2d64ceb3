// Finds a PostgreSQL server for the postgres project before any test file runs:
// TEST_DATABASE_URL, else the machine's server on 127.0.0.1:5432, and makes the
// run's template there: a database of its own holding one schema the gateway's
// migrations have run on, once, and that schema's dump (pg_dump). A test's store
// is a schema made from the dump in its worker's database, or, without pg_dump, a
// copy of the template database (test/helpers/gateway.ts), so a test pays no
// migrations unless it asks for an empty store. After the run, the template and
// the databases named after it (the workers', any copy a crashed test left) are
// dropped, and before it, those of runs killed more than
// six hours ago (their names carry when they were made). With no server at all
// the postgres tests are skipped with a loud message, except under CI, where
// that is a failure.
// Must never: drop a database other than this run's and an abandoned run's
// (other runs share the server), or leave a connection open to the template
// (copying it needs none).
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { openStore } from '../../src/store/store.js';
import { takesConnections } from './pg-reachable.js';
import { TEMPLATE_SCHEMA, databaseUrlOf, onServer, schemaFromDump } from './pg-databases.js';
import type { TestProject } from 'vitest/node';

const run = promisify(execFile);

declare module 'vitest' {
  export interface ProvidedContext {
    pgAdminUrl: string | null;
    /**
     * This run's migrated template database, the name of its migrated schema and that schema's dump (null where
     * pg_dump could not make one), or null without a server.
     */
    pgTemplate: { database: string; schema: string; dump: string | null } | null;
  }
}

async function makeTemplate(admin: string, database: string): Promise<void> {
  await onServer(admin, (c) => c.query(`create database ${database}`));
  await onServer(databaseUrlOf(admin, database), (c) => c.query(`create schema ${TEMPLATE_SCHEMA}`));
  const dataDir = await mkdtemp(join(tmpdir(), 'gw-template-'));
  const store = openStore({ databaseUrl: databaseUrlOf(admin, database, TEMPLATE_SCHEMA), dataDir });
  try {
    await store.migrate();
  } finally {
    await store.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}

/**
 * The template schema's tables, functions, triggers and rows as SQL (pg_dump, plain INSERTs, no owners), tried once
 * on a schema of its own in the template database (a pg_dump of another major version may write settings the server
 * does not know), or null with a warning where pg_dump is missing or its dump fails: the tests then copy the
 * template database instead, slower.
 */
async function dumpOf(admin: string, database: string): Promise<string | null> {
  try {
    const { stdout } = await run(
      'pg_dump',
      ['--schema', TEMPLATE_SCHEMA, '--no-owner', '--no-privileges', '--inserts', databaseUrlOf(admin, database)],
      {
        timeout: 60_000,
        maxBuffer: 16 * 1024 * 1024,
      },
    );
    const trial = `${TEMPLATE_SCHEMA}_trial`;
    await onServer(databaseUrlOf(admin, database), async (c) => {
      await c.query(schemaFromDump(stdout, trial));
      await c.query(`drop schema ${trial} cascade`);
    });
    return stdout;
  } catch (error) {
    console.error(
      `pg_dump of the test template failed (${String(error).split('\n')[0]}); each test store will copy the template database.`,
    );
    return null;
  }
}

/** Drops the template and every copy of it still there (named after it), never another run's databases. */
async function dropRun(admin: string, database: string): Promise<void> {
  await onServer(admin, async (c) => {
    const { rows } = await c.query<{ datname: string }>(
      `select datname from pg_database where datname = $1 or datname like $2`,
      [database, `${database.replace(/_/g, '\\_')}\\_%`],
    );
    for (const { datname } of rows) await c.query(`drop database if exists ${datname} with (force)`);
  });
}

/** A run's template is named after the second it was made, so a later run can tell an abandoned one by its age. */
const TEMPLATE_NAME = /^gw_tmpl_(\d{10})_[0-9a-f]{10}$/;
/** No run lasts this long: a template this old (and its copies) was left by a run that was killed. */
const ABANDONED_AFTER_S = 6 * 60 * 60;

/** Drops the templates, with their copies, of runs killed before their teardown, long enough ago to be over. */
async function dropAbandoned(admin: string, nowS: number): Promise<void> {
  const { rows } = await onServer(admin, (c) =>
    c.query<{ datname: string }>(`select datname from pg_database where datname like 'gw\\_tmpl\\_%'`),
  );
  for (const { datname } of rows) {
    const made = TEMPLATE_NAME.exec(datname);
    if (made !== null && nowS - Number(made[1]) > ABANDONED_AFTER_S) await dropRun(admin, datname);
  }
}

export default async function setup(project: TestProject): Promise<(() => Promise<void>) | undefined> {
  const url = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  if (await takesConnections(url, 3000)) {
    const nowS = Math.floor(Date.now() / 1000);
    await dropAbandoned(url, nowS);
    const database = `gw_tmpl_${nowS}_${randomBytes(5).toString('hex')}`;
    try {
      await makeTemplate(url, database);
    } catch (error) {
      await dropRun(url, database).catch(() => undefined);
      throw error;
    }
    project.provide('pgAdminUrl', url);
    project.provide('pgTemplate', { database, schema: TEMPLATE_SCHEMA, dump: await dumpOf(url, database) });
    return () => dropRun(url, database);
  }
  const message = `PostgreSQL is not reachable at ${url.replace(/:[^:@/]*@/, ':***@')}; set TEST_DATABASE_URL.`;
  if (process.env.CI) throw new Error(`${message} CI must run the PostgreSQL tests.`);
  console.error(`\n${'!'.repeat(78)}\n!! SKIPPING every PostgreSQL test: ${message}\n${'!'.repeat(78)}\n`);
  project.provide('pgAdminUrl', null);
  project.provide('pgTemplate', null);
  return undefined;
}
