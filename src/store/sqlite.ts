/**
 * The SQLite dialect of the store: better-sqlite3 in WAL mode with durable
 * commits.
 *
 * Owns: opening the database file, its pragmas, and how transactions begin.
 * Must never: relax `synchronous` below FULL (an answered message must survive
 * power loss) or let two processes both start writing from stale snapshots.
 */
import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { CompiledQuery, SqliteDialect, SqliteDriver, type DatabaseConnection, type Driver } from 'kysely';

type BetterSqlite = Database.Database;

/** Kysely prepares every query anew; SQL text repeats, so keep the prepared statements. */
function withStatementCache(db: BetterSqlite, capacity = 500) {
  const cache = new Map<string, Database.Statement>();
  return {
    close: () => db.close(),
    prepare(sql: string) {
      let statement = cache.get(sql);
      if (statement === undefined) {
        statement = db.prepare(sql);
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
  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'));
  }
}

class ImmediateSqliteDialect extends SqliteDialect {
  constructor(private readonly database: ReturnType<typeof withStatementCache>) {
    super({ database });
  }
  override createDriver(): Driver {
    return new ImmediateSqliteDriver({ database: this.database });
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

export function openSqlite(file: string): SqliteDialect {
  if (file !== ':memory:') mkdirSync(dirname(file), { recursive: true });
  const raw = new Database(file);
  raw.pragma('busy_timeout = 10000');
  enableWal(raw);
  raw.pragma('synchronous = FULL');
  raw.pragma('foreign_keys = ON');
  return new ImmediateSqliteDialect(withStatementCache(raw));
}
