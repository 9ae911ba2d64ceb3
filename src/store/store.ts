/**
 * The store: one typed database handle over SQLite or PostgreSQL.
 *
 * Owns: choosing the dialect from the configuration, running migrations,
 * readiness checks, and closing. Repositories get `store.db` and the
 * capability flags; nothing outside src/store/ names a dialect.
 */
import { Kysely, sql, type Transaction } from 'kysely';
import { randomBytes } from 'node:crypto';
import { join, resolve } from 'node:path';
import type { Database } from './schema.js';
import { openSqlite } from './sqlite.js';
import { MIGRATION_POSTGRES_TIMEOUTS, openPostgres } from './postgres.js';
import { migrateToLatest } from './migrate.js';
import { introspectingOwnSchema } from './own-schema-introspector.js';
import { postgresMigrationDialect, sqliteMigrationDialect } from './migrations/helpers.js';
import { StoreTimeoutError, storeFault } from './faults.js';
import { WriteHealth, watchedDialect } from './health.js';
import { LogAppends } from './appends.js';

export interface StoreCapabilities {
  /** Several processes may share the store and claim work with `FOR UPDATE SKIP LOCKED`. */
  readonly sharedByProcesses: boolean;
}

/**
 * The free space inside the store's file (SQLite only; PostgreSQL's own vacuum makes the space of deleted rows
 * reusable, and nothing here needs to ask for it). Each call runs on the store's connection between transactions.
 */
export interface StoreSpace {
  /** Bytes in free pages: freed by deletes, reused by the next writes, still part of the file. */
  freeBytes(): Promise<number>;
  /** Gives up to `pages` free pages back to the file system; answers the bytes given back. */
  release(pages: number): Promise<number>;
  /** Makes what `release` gave back leave the file on disk now (a WAL checkpoint that waits for no one). */
  checkpoint(): Promise<void>;
}

/** A one-time change the store made to itself while opening (for the start-up log). */
export interface StoreUpkeep {
  readonly what: string;
  /** The change could not be made (logged as a warning); the store works without it. */
  readonly failed?: boolean;
  readonly [field: string]: unknown;
}

export type Readiness = { readonly ready: true } | { readonly ready: false; readonly reason: string };

export interface Store {
  readonly db: Kysely<Database>;
  readonly capabilities: StoreCapabilities;
  /** Where the data lives, without credentials, for the start-up log. */
  readonly description: string;
  /** Null on PostgreSQL. */
  readonly space: StoreSpace | null;
  /** Told after each commit of this process that appended to the event log (appends.ts). */
  readonly appends: Pick<LogAppends, 'subscribe'>;
  migrate(): Promise<string[]>;
  /** Which store this is, for people, and whether it was ever set up (no migration recorded: a fresh store). */
  identify(): Promise<StoreIdentity>;
  /**
   * One transaction that no other process runs at the same time under the same `name`, so read-then-write work
   * such as the first start's bootstrap is decided once: a second caller waits, then sees what the first wrote.
   * PostgreSQL: a transaction-level advisory lock on the name; SQLite: the write transaction (BEGIN IMMEDIATE)
   * already excludes every other writer.
   */
  serialized<T>(name: string, work: (trx: Transaction<Database>) => Promise<T>): Promise<T>;
  /**
   * Whether the store answers, within READINESS_TIMEOUT_MS, and can write: after a write failed for a store
   * fault (full disk, read-only file), a throwaway write must succeed before it is ready again.
   */
  readiness(): Promise<Readiness>;
  close(): Promise<void>;
}

export interface StoreIdentity {
  /** `sqlite /absolute/path/gateway.sqlite` or `postgres user@host:port/database, schema NAME`; never a password. */
  readonly where: string;
  /** No migration has ever run on it: opening it made it, or nothing of the gateway's is there. */
  readonly fresh: boolean;
}

/** Readiness answers within this, whatever the database does. */
export const READINESS_TIMEOUT_MS = 2_000;
const PROBE_BYTES = 16 * 1024;

export interface StoreOptions {
  readonly databaseUrl: string | null;
  readonly dataDir: string;
  /** SQLite file name under dataDir (tests use their own). */
  readonly sqliteFile?: string;
  /**
   * SQLite: hold the data directory for this process alone (the gateway; a second one is refused at once).
   * The CLI leaves it unset and works beside a running gateway. No effect on PostgreSQL, which nodes share.
   */
  readonly exclusive?: boolean;
  /** Told of one-time changes made while migrating (e.g. the SQLite file switched to incremental vacuum). */
  readonly onUpkeep?: (upkeep: StoreUpkeep) => void;
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

/** The SQLite file a store's options name (absolute), or null for PostgreSQL. Opening it creates it when missing. */
export function sqliteFileOf(options: Pick<StoreOptions, 'databaseUrl' | 'dataDir' | 'sqliteFile'>): string | null {
  return options.databaseUrl === null ? resolve(options.dataDir, options.sqliteFile ?? 'gateway.sqlite') : null;
}

/** `user@host:port/database` of a PostgreSQL URL, without its password or parameters. */
function postgresWhere(url: string): string {
  try {
    const parsed = new URL(url);
    const user = parsed.username === '' ? '' : `${decodeURIComponent(parsed.username)}@`;
    return `${user}${parsed.host}${decodeURIComponent(parsed.pathname)}`;
  } catch {
    return '(unparseable DATABASE_URL)';
  }
}

export function openStore(options: StoreOptions): Store {
  const health = new WriteHealth();
  const appends = new LogAppends();
  if (options.databaseUrl !== null) {
    const url = options.databaseUrl;
    const { dialect } = openPostgres(url);
    const db = new Kysely<Database>({ dialect: watchedDialect(dialect, health, appends) });
    const identify = async (): Promise<StoreIdentity> => {
      const { rows } = await sql<{ schema: string; migrated: string | null }>`
        select current_schema() as schema, to_regclass(quote_ident(current_schema()) || '.kysely_migration')::text as migrated
      `.execute(db);
      const row = rows[0];
      return {
        where: `postgres ${postgresWhere(url)}, schema ${row?.schema ?? '(none)'}`,
        fresh: (row?.migrated ?? null) === null,
      };
    };
    return build(
      db,
      health,
      appends,
      { sharedByProcesses: true },
      `postgres ${redact(url)}`,
      identify,
      advisoryLock,
      null,
      async () => {
        const migrations = new Kysely<unknown>({
          dialect: introspectingOwnSchema(
            openPostgres(url, { poolSize: 1, timeouts: MIGRATION_POSTGRES_TIMEOUTS }).dialect,
          ),
        });
        try {
          const { rows } = await sql<{ schema: string }>`select current_schema() as schema`.execute(migrations);
          return await migrateToLatest(migrations, postgresMigrationDialect, rows[0]?.schema ?? 'public');
        } finally {
          await migrations.destroy();
        }
      },
    );
  }
  const file = join(options.dataDir, options.sqliteFile ?? 'gateway.sqlite');
  const identify = async (): Promise<StoreIdentity> => {
    const { rows } = await sql<{ n: number }>`
      select count(*) as n from sqlite_master where type = 'table' and name = 'kysely_migration'
    `.execute(db);
    return { where: `sqlite ${resolve(file)}`, fresh: Number(rows[0]?.n ?? 0) === 0 };
  };
  const dialect = openSqlite(file, options.exclusive === true ? { lockDataDir: options.dataDir } : {});
  const db = new Kysely<Database>({ dialect: watchedDialect(dialect, health, appends) });
  // On the store's one connection, so never inside a transaction of the gateway's.
  const onConnection = <T>(run: () => T): Promise<T> => db.connection().execute(async () => run());
  const space: StoreSpace = {
    freeBytes: () => onConnection(() => dialect.space.freeBytes()),
    release: (pages) => onConnection(() => dialect.space.release(pages)),
    checkpoint: () => onConnection(() => dialect.space.checkpoint()),
  };
  return build(
    db,
    health,
    appends,
    { sharedByProcesses: false },
    `sqlite ${file}`,
    identify,
    async () => undefined,
    space,
    async () => {
      // Only the gateway, which holds the data directory: the CLI must not rewrite a file a gateway is using.
      if (options.exclusive === true) {
        try {
          const made = await onConnection(() => dialect.space.makeIncremental());
          if (made !== null)
            options.onUpkeep?.({ what: 'sqlite file switched to incremental vacuum (one-time VACUUM)', ...made });
        } catch (error) {
          // Not fatal (e.g. too little free disk for the copy): freed pages are still reused; tried again next start.
          options.onUpkeep?.({
            what: 'sqlite file not switched to incremental vacuum; free space is reused but not given back',
            failed: true,
            reason: error instanceof Error ? error.message : String(error),
          });
        }
      }
      return migrateToLatest(db as Kysely<unknown>, sqliteMigrationDialect);
    },
  );
}

/**
 * Held until the transaction ends. Advisory locks are database-wide: the key is the name within this schema, so
 * gateways on other schemas of the same database never wait for each other.
 */
async function advisoryLock(trx: Transaction<Database>, name: string): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtext(current_schema() || '/' || ${name}))`.execute(trx);
}

function within<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new StoreTimeoutError('the readiness check', ms)), ms);
  });
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
}

/** The driver's code of a store fault, as a suffix for a readiness reason. */
function codeOf(error: unknown): string {
  const fault = storeFault(error);
  return fault === null ? '' : ` (${fault.code})`;
}

function build(
  db: Kysely<Database>,
  health: WriteHealth,
  appends: LogAppends,
  capabilities: StoreCapabilities,
  description: string,
  identify: () => Promise<StoreIdentity>,
  exclude: (trx: Transaction<Database>, name: string) => Promise<void>,
  space: StoreSpace | null,
  migrate: () => Promise<string[]>,
): Store {
  let closed = false;
  // A throwaway row written and removed in one transaction; it has to reach the disk like any other write.
  const probe = () =>
    db.transaction().execute(async (trx) => {
      await trx
        .insertInto('store_probe')
        .values({ checked_at: Date.now(), filler: randomBytes(PROBE_BYTES) })
        .execute();
      await trx.deleteFrom('store_probe').execute();
    });
  return {
    db,
    capabilities,
    description,
    space,
    appends,
    migrate,
    identify,
    serialized: (name, work) =>
      db.transaction().execute(async (trx) => {
        await exclude(trx, name);
        return work(trx);
      }),
    async readiness() {
      try {
        await within(sql`select 1`.execute(db), READINESS_TIMEOUT_MS);
      } catch (error) {
        return { ready: false, reason: `the store does not answer${codeOf(error)}` };
      }
      const fault = health.fault;
      if (fault === null) return { ready: true };
      try {
        await within(probe(), READINESS_TIMEOUT_MS);
        return { ready: true };
      } catch (error) {
        const now = storeFault(error);
        return { ready: false, reason: `the store cannot write (${now?.code ?? fault.code})` };
      }
    },
    async close() {
      if (closed) return;
      closed = true;
      await db.destroy();
    },
  };
}
