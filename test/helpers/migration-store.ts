/**
 * A store for one migration's own test: a new, unmigrated database on the store the run uses (SQLite or PostgreSQL),
 * opened with Kysely, in which the test makes the tables the migration reads as the earlier migrations left them,
 * writes rows, runs the migration's `up` and reads what it made. Not a test file itself.
 */
import { join } from 'node:path';
import { Kysely } from 'kysely';
import { afterEach } from 'vitest';
import {
  postgresMigrationDialect,
  sqliteMigrationDialect,
  type MigrationDialect,
} from '../../src/store/migrations/helpers.js';
import { openPostgres } from '../../src/store/postgres.js';
import { openSqlite } from '../../src/store/sqlite.js';
import { newStoreLocation } from './gateway.js';

export interface MigrationStore {
  // The tables are the test's own, made as they stood before the migration: no schema type to give them.
  db: Kysely<any>;
  /** What the migration's `up` takes for the store's dialect. */
  dialect: MigrationDialect;
}

/**
 * Call inside the `describe`: `open()` gives a new store; each is closed and dropped after its test.
 */
export function migrationStores(): { open(): Promise<MigrationStore> } {
  const cleanup: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const step of cleanup.splice(0).reverse()) await step();
  });
  return {
    async open() {
      const location = await newStoreLocation({ migrated: false });
      cleanup.push(() => location.drop());
      const sqlite = location.databaseUrl === null;
      const dialect = sqlite
        ? openSqlite(join(location.dataDir, 'gateway.sqlite'))
        : openPostgres(location.databaseUrl).dialect;
      const db = new Kysely<any>({ dialect });
      cleanup.push(() => db.destroy());
      return { db, dialect: sqlite ? sqliteMigrationDialect : postgresMigrationDialect };
    },
  };
}
