// Finds a PostgreSQL server for the postgres project before any test file runs:
// TEST_DATABASE_URL, else the machine's server on 127.0.0.1:5432, and makes the
// run's template there: a database of its own holding one schema the gateway's
// migrations have run on, once. A test's store is a copy of it (CREATE DATABASE
// ... TEMPLATE, test/helpers/gateway.ts), so a test pays no migrations unless
// it asks for an empty store. After the run, the template and any copy a
// crashed test left are dropped. With no server at all the postgres tests are
// skipped with a loud message, except under CI, where that is a failure.
// Must never: drop or touch a database that is not this run's (other runs share
// the server), or leave a connection open to the template (copying it needs none).
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore } from '../../src/store/store.js';
import { takesConnections } from './pg-reachable.js';
import { TEMPLATE_SCHEMA, databaseUrlOf, onServer } from './pg-databases.js';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    pgAdminUrl: string | null;
    /** This run's migrated template database and the name of its migrated schema, or null without a server. */
    pgTemplate: { database: string; schema: string } | null;
  }
}

async function makeTemplate(admin: string, database: string): Promise<void> {
  await onServer(admin, (c) => c.query(`create database ${database}`).then(() => undefined));
  await onServer(databaseUrlOf(admin, database), (c) =>
    c.query(`create schema ${TEMPLATE_SCHEMA}`).then(() => undefined),
  );
  const dataDir = await mkdtemp(join(tmpdir(), 'gw-template-'));
  const store = openStore({ databaseUrl: databaseUrlOf(admin, database, TEMPLATE_SCHEMA), dataDir });
  try {
    await store.migrate();
  } finally {
    await store.close();
    await rm(dataDir, { recursive: true, force: true });
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

export default async function setup(project: TestProject): Promise<(() => Promise<void>) | undefined> {
  const url = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  if (await takesConnections(url, 3000)) {
    const database = `gw_tmpl_${randomBytes(5).toString('hex')}`;
    try {
      await makeTemplate(url, database);
    } catch (error) {
      await dropRun(url, database).catch(() => undefined);
      throw error;
    }
    project.provide('pgAdminUrl', url);
    project.provide('pgTemplate', { database, schema: TEMPLATE_SCHEMA });
    return () => dropRun(url, database);
  }
  const message = `PostgreSQL is not reachable at ${url.replace(/:[^:@/]*@/, ':***@')}; set TEST_DATABASE_URL.`;
  if (process.env.CI) throw new Error(`${message} CI must run the PostgreSQL tests.`);
  console.error(`\n${'!'.repeat(78)}\n!! SKIPPING every PostgreSQL test: ${message}\n${'!'.repeat(78)}\n`);
  project.provide('pgAdminUrl', null);
  project.provide('pgTemplate', null);
  return undefined;
}
