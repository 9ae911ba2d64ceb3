// Migrates one SQLite store file before the sqlite, dashboard and unit projects'
// test files run, and removes it afterwards. A test's SQLite store is a new data
// directory holding a copy of it (test/helpers/gateway.ts), as a gateway's first
// start would leave it, so a test pays no migrations unless it asks for an empty
// data directory: migrating a new file cost about 20 ms of CPU and 30 ms of
// waiting (a commit, with its sync, a migration), a copy a fraction of a
// millisecond.
// Must never: leave the file open (a copy of an open store could miss what its
// write-ahead log holds).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { openStore, sqliteFileOf } from '../../src/store/store.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The migrated, closed SQLite store file of this run, to copy. */
    sqliteTemplate: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const location = { databaseUrl: null, dataDir: await mkdtemp(join(tmpdir(), 'gw-sqlite-template-')) };
  const store = openStore(location);
  try {
    await store.migrate();
  } finally {
    await store.close();
  }
  project.provide('sqliteTemplate', sqliteFileOf(location)!);
  return () => rm(location.dataDir, { recursive: true, force: true });
}
