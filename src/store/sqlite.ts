/**
 * The SQLite dialect of the store: better-sqlite3 in WAL mode with durable
 * commits.
 *
 * Owns: opening the database file, its pragmas, and how transactions begin;
 * the file's free pages (auto_vacuum INCREMENTAL: pages freed by deletes are
 * reused by later writes, and given back to the file system on request; see
 * docs/media-storage.md).
 * Must never: relax `synchronous` below FULL (an answered message must survive
 * power loss) or let two processes both start writing from stale snapshots.
 */
import Database from 'better-sqlite3';
import { accessSync, constants, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { performance } from 'node:perf_hooks';
import { StoreOpenError } from './faults.js';
import { DataDirInUseError, lockDataDir, type DataDirLock } from './data-dir-lock.js';
import { CompiledQuery, SqliteDialect, SqliteDriver, type DatabaseConnection, type Driver } from 'kysely';

type BetterSqlite = Database.Database;

/**
 * A bare parameter as a LIMIT or OFFSET, written as an expression. SQLite (3.53, as better-sqlite3 builds it) plans
 * with the value bound to a bare LIMIT parameter and so prepares the statement again whenever the binding is set,
 * which better-sqlite3 does at every run: the dispatcher's read of a lane's queue took 17 µs instead of 3, and the
 * webhook claim's statement 0.56 ms instead of 0.29 (bench/README.md). Behind a cast the value is read when the
 * statement runs, as before, and the plan is kept. The rows are the same for the integers the gateway binds.
 */
export function boundLimits(sql: string): string {
  return sql.replace(/\b(limit|offset) \?/gi, '$1 cast(? as integer)');
}

/** Kysely prepares every query anew; SQL text repeats, so keep the prepared statements. */
function withStatementCache(db: BetterSqlite, lock: DataDirLock | null, capacity = 500) {
  const cache = new Map<string, Database.Statement>();
  return {
    close: () => {
      db.close();
      lock?.release();
    },
    get inTransaction() {
      return db.inTransaction;
    },
    prepare(sql: string) {
      let statement = cache.get(sql);
      if (statement === undefined) {
        statement = db.prepare(boundLimits(sql));
        if (cache.size >= capacity) cache.delete(cache.keys().next().value as string);
        cache.set(sql, statement);
      }
      return statement;
    },
  };
}

/**
 * `BEGIN IMMEDIATE` takes the write lock up front, so a second process (the CLI,
 * a migration) waits on busy_timeout instead of failing on a stale snapshot.
 */
class ImmediateSqliteDriver extends SqliteDriver {
  constructor(private readonly database: ReturnType<typeof withStatementCache>) {
    super({ database });
  }

  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'));
  }

  /**
   * SQLite ends the transaction by itself on some errors (SQLITE_FULL,
   * SQLITE_IOERR, SQLITE_BUSY, SQLITE_NOMEM); a ROLLBACK then fails with
   * "cannot rollback - no transaction is active", and that error would be
   * thrown in place of the real one.
   */
  override async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    if (!this.database.inTransaction) return;
    await super.rollbackTransaction(connection);
  }
}

/** The page cache of the connection, in KiB (`pragma cache_size` takes it negative). */
export const PAGE_CACHE_KIB = 4096;

/** `pragma auto_vacuum` of a file that frees pages on request. */
const INCREMENTAL = 2;

/**
 * The file's free pages. Called only while holding the dialect's one connection (Kysely's mutex), so no
 * transaction of the gateway is open on it.
 */
export interface SqliteSpace {
  /** Bytes in free pages: freed by deletes, reused by the next writes, still part of the file. */
  freeBytes(): number;
  /**
   * Gives up to `pages` free pages back to the file system (the file shrinks at the next checkpoint);
   * answers the bytes given back. Only with auto_vacuum INCREMENTAL; otherwise nothing happens.
   */
  release(pages: number): number;
  /**
   * Copies the write-ahead log into the file without waiting for anyone (PASSIVE), which is when pages given back
   * leave the file on disk; otherwise that waits for the next automatic checkpoint (after 1,000 pages of writes).
   */
  checkpoint(): void;
  /** Whether the file frees pages incrementally (0 none, 1 full, 2 incremental). */
  autoVacuum(): number;
  /**
   * Switches a store made before auto_vacuum INCREMENTAL to it: a one-time VACUUM that rewrites the whole file
   * (time and, briefly, free disk space of about the file's size) and then empties the WAL. Answers what it did,
   * or null when the file was incremental already.
   */
  makeIncremental(): { ms: number; bytesBefore: number; bytesAfter: number } | null;
}

class ImmediateSqliteDialect extends SqliteDialect {
  readonly space: SqliteSpace;

  constructor(
    private readonly database: ReturnType<typeof withStatementCache>,
    raw: BetterSqlite,
  ) {
    super({ database });
    const pragma = (name: string) => Number(raw.pragma(name, { simple: true }));
    this.space = {
      freeBytes: () => pragma('freelist_count') * pragma('page_size'),
      release(pages) {
        if (pragma('auto_vacuum') !== INCREMENTAL) return 0;
        const before = pragma('freelist_count');
        // exec, not a prepared statement: a statement run once steps once, and each step frees one page.
        raw.exec(`pragma incremental_vacuum(${Math.max(1, Math.floor(pages))})`);
        return (before - pragma('freelist_count')) * pragma('page_size');
      },
      checkpoint: () => void raw.pragma('wal_checkpoint(PASSIVE)'),
      autoVacuum: () => pragma('auto_vacuum'),
      makeIncremental() {
        if (pragma('auto_vacuum') === INCREMENTAL) return null;
        const started = performance.now();
        const bytesBefore = pragma('page_count') * pragma('page_size');
        raw.pragma('auto_vacuum = INCREMENTAL');
        raw.exec('vacuum');
        // VACUUM wrote the whole file through the WAL: empty it, so the disk gets that space back now.
        raw.pragma('wal_checkpoint(TRUNCATE)');
        return {
          ms: Math.round(performance.now() - started),
          bytesBefore,
          bytesAfter: pragma('page_count') * pragma('page_size'),
        };
      },
    };
  }
  override createDriver(): Driver {
    return new ImmediateSqliteDriver(this.database);
  }
}

/**
 * Switching a fresh file to WAL needs an exclusive lock, and SQLite answers
 * SQLITE_BUSY at once (without waiting on busy_timeout) when another process is
 * switching it at the same moment; WAL is then set by the other one, or the
 * next attempt succeeds.
 */
function enableWal(raw: BetterSqlite): void {
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (let attempt = 1; ; attempt++) {
    try {
      raw.pragma('journal_mode = WAL');
      return;
    } catch (error) {
      if ((error as { code?: unknown }).code !== 'SQLITE_BUSY' || attempt >= 100) throw error;
      Atomics.wait(pause, 0, 0, 20);
    }
  }
}

export interface SqliteOpenOptions {
  /** Hold this data directory's lock while open (the gateway does; the CLI does not): see data-dir-lock.ts. */
  readonly lockDataDir?: string;
}

/**
 * Opens the file and checks that it can be written (a read-only directory or
 * file fails here, at start-up, not on the first message); a failure is a
 * StoreOpenError naming the file and the reason, or a DataDirInUseError when
 * another gateway holds the data directory.
 */
export function openSqlite(
  file: string,
  options: SqliteOpenOptions = {},
): SqliteDialect & { readonly space: SqliteSpace } {
  let raw: BetterSqlite | undefined;
  let lock: DataDirLock | null = null;
  try {
    if (file !== ':memory:') mkdirSync(dirname(file), { recursive: true });
    // Before anything touches the database: a second gateway must not even migrate it.
    if (options.lockDataDir !== undefined) lock = lockDataDir(options.lockDataDir);
    raw = new Database(file);
    raw.pragma('busy_timeout = 10000');
    // A new file frees pages incrementally from the start (it can be set only before the first table; an older
    // store is switched by a one-time VACUUM: SqliteSpace.makeIncremental).
    if (Number(raw.pragma('page_count', { simple: true })) === 0) raw.pragma('auto_vacuum = INCREMENTAL');
    enableWal(raw);
    raw.pragma('synchronous = FULL');
    raw.pragma('foreign_keys = ON');
    // A 4 MiB page cache (the driver's build makes it 16): media chunks pass through it page by page, and each page
    // cached stays resident, so 16 MiB of a download or a read stayed in the gateway's memory (issue 26; the
    // operating system's file cache still answers what this one misses).
    raw.pragma(`cache_size = -${PAGE_CACHE_KIB}`);
    raw.exec('begin immediate');
    raw.exec('rollback');
  } catch (error) {
    raw?.close();
    lock?.release();
    if (error instanceof DataDirInUseError) throw error;
    throw new StoreOpenError(`cannot open the SQLite store ${file} for writing: ${whyNot(file, error)}`, error);
  }
  return new ImmediateSqliteDialect(withStatementCache(raw, lock), raw);
}

function whyNot(file: string, error: unknown): string {
  const directory = dirname(file);
  try {
    accessSync(directory, constants.W_OK);
  } catch (access) {
    const code = (access as { code?: string }).code;
    // SQLite only says it cannot open the file; the real cause is the directory (it needs -wal and -shm beside it).
    if (code !== 'ENOENT') return `the directory ${directory} is not writable (${code ?? 'EACCES'})`;
  }
  return describe(error);
}

function describe(error: unknown): string {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  const reason = typeof message === 'string' ? message.replace(/^[A-Z]+: /, '').split(',')[0] : String(error);
  return typeof code === 'string' ? `${reason} (${code})` : (reason ?? 'unknown error');
}
