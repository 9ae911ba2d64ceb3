/**
 * The store: one typed database handle over SQLite or PostgreSQL.
 *
 * Owns: choosing the dialect from the configuration, running migrations,
 * readiness checks, and closing. Repositories get `store.db` and the
 * capability flags; nothing outside src/store/ names a dialect.
 */
import { Kysely, sql } from 'kysely';
import { join } from 'node:path';
import type { Database } from './schema.js';
import { openSqlite } from './sqlite.js';
import { openPostgres } from './postgres.js';
import { migrateToLatest } from './migrate.js';
import { postgresMigrationDialect, sqliteMigrationDialect } from './migrations/helpers.js';

export interface StoreCapabilities {
  /** Several processes may share the store and claim work with `FOR UPDATE SKIP LOCKED`. */
  readonly sharedByProcesses: boolean;
}

export interface Store {
  readonly db: Kysely<Database>;
  readonly capabilities: StoreCapabilities;
  /** Where the data lives, without credentials, for the start-up log. */
  readonly description: string;
  migrate(): Promise<string[]>;
  ping(): Promise<boolean>;
  close(): Promise<void>;
}

export interface StoreOptions {
  readonly databaseUrl: string | null;
  readonly dataDir: string;
  /** SQLite file name under dataDir (tests use their own). */
  readonly sqliteFile?: string;
}

function redact(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.password = parsed.password ? '***' : '';
    return parsed.toString();
  } catch {
    return 'postgres://(unparseable)';
  }
}

export function openStore(options: StoreOptions): Store {
  if (options.databaseUrl !== null) {
    const { dialect } = openPostgres(options.databaseUrl);
    const db = new Kysely<Database>({ dialect });
    return build(db, { sharedByProcesses: true }, `postgres ${redact(options.databaseUrl)}`, async () => {
      const { rows } = await sql<{ schema: string }>`select current_schema() as schema`.execute(db);
      return migrateToLatest(db as Kysely<unknown>, postgresMigrationDialect, rows[0]?.schema ?? 'public');
    });
  }
  const file = join(options.dataDir, options.sqliteFile ?? 'gateway.sqlite');
  const dialect = openSqlite(file);
  const db = new Kysely<Database>({ dialect });
  return build(db, { sharedByProcesses: false }, `sqlite ${file}`, () =>
    migrateToLatest(db as Kysely<unknown>, sqliteMigrationDialect),
  );
}

function build(
  db: Kysely<Database>,
  capabilities: StoreCapabilities,
  description: string,
  migrate: () => Promise<string[]>,
): Store {
  let closed = false;
  return {
    db,
    capabilities,
    description,
    migrate,
    async ping() {
      try {
        await sql`select 1`.execute(db);
        return true;
      } catch {
        return false;
      }
    },
    async close() {
      if (closed) return;
      closed = true;
      await db.destroy();
    },
  };
}
