/**
 * What the store's own traffic says about its health: a write that failed for
 * a store fault (full disk, read-only file, lost server) leaves the store
 * "faulted" until a later write commits. Readiness reads it, so a store that
 * answers `select 1` but cannot write is not reported ready.
 *
 * The same watch tells the log's followers when a commit appended events (appends.ts).
 *
 * Owns: watching every statement and commit of the store's Kysely dialect
 * (a wrapper around the dialect's driver; SQL and results pass unchanged).
 * Must never: change, retry or swallow a query or its error.
 */
import type {
  CompiledQuery,
  DatabaseConnection,
  Dialect,
  Driver,
  Kysely,
  QueryCompiler,
  QueryResult,
  TransactionSettings,
} from 'kysely';
import { storeFault, type StoreFault } from './faults.js';
import { appendsToLog, type LogAppends } from './appends.js';

export interface Fault extends StoreFault {
  readonly message: string;
  readonly at: number;
}

export class WriteHealth {
  private current: Fault | null = null;

  /** The fault of the last failed write, while no write has committed since. */
  get fault(): Fault | null {
    return this.current;
  }

  failed(error: unknown): void {
    const fault = storeFault(error);
    if (fault === null) return;
    const message = error instanceof Error ? error.message : String(error);
    this.current = { ...fault, message, at: Date.now() };
  }

  wrote(): void {
    this.current = null;
  }
}

const WRITES = new Set(['InsertQueryNode', 'UpdateQueryNode', 'DeleteQueryNode', 'MergeQueryNode']);

class WatchedConnection implements DatabaseConnection {
  inTransaction = false;
  /** A statement on this connection appended events that are (or, in a transaction, will be once it commits) stored. */
  appended = false;
  constructor(
    readonly inner: DatabaseConnection,
    private readonly health: WriteHealth,
  ) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    try {
      const result = await this.inner.executeQuery<R>(query);
      if (!this.inTransaction && WRITES.has(query.query.kind)) this.health.wrote();
      if (appendsToLog(query.sql)) this.appended = true;
      return result;
    } catch (error) {
      this.health.failed(error);
      throw error;
    }
  }

  streamQuery<R>(query: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
    return this.inner.streamQuery<R>(query, chunkSize);
  }
}

const unwrap = (connection: DatabaseConnection) =>
  connection instanceof WatchedConnection ? connection.inner : connection;

class WatchedDriver implements Driver {
  constructor(
    private readonly inner: Driver,
    private readonly health: WriteHealth,
    private readonly appends: LogAppends,
  ) {}

  init(): Promise<void> {
    return this.inner.init();
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    try {
      return new WatchedConnection(await this.inner.acquireConnection(), this.health);
    } catch (error) {
      this.health.failed(error);
      throw error;
    }
  }

  async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    try {
      await this.inner.beginTransaction(unwrap(connection), settings);
    } catch (error) {
      this.health.failed(error);
      throw error;
    }
    if (connection instanceof WatchedConnection) connection.inTransaction = true;
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    try {
      await this.inner.commitTransaction(unwrap(connection));
      this.health.wrote();
    } catch (error) {
      this.health.failed(error);
      throw error;
    } finally {
      if (connection instanceof WatchedConnection) connection.inTransaction = false;
    }
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    try {
      await this.inner.rollbackTransaction(unwrap(connection));
    } finally {
      if (connection instanceof WatchedConnection) {
        connection.inTransaction = false;
        // What the transaction appended is gone with it.
        connection.appended = false;
      }
    }
  }

  async savepoint(connection: DatabaseConnection, name: string, compile: QueryCompiler['compileQuery']): Promise<void> {
    await this.inner.savepoint?.(unwrap(connection), name, compile);
  }

  async rollbackToSavepoint(
    connection: DatabaseConnection,
    name: string,
    compile: QueryCompiler['compileQuery'],
  ): Promise<void> {
    await this.inner.rollbackToSavepoint?.(unwrap(connection), name, compile);
  }

  async releaseSavepoint(
    connection: DatabaseConnection,
    name: string,
    compile: QueryCompiler['compileQuery'],
  ): Promise<void> {
    await this.inner.releaseSavepoint?.(unwrap(connection), name, compile);
  }

  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    await this.inner.releaseConnection(unwrap(connection));
    // Told once the connection is free again (on SQLite, the one connection a follower's read needs), after its
    // commit: a transaction always ends before its connection is released.
    if (connection instanceof WatchedConnection && connection.appended && !connection.inTransaction) {
      connection.appended = false;
      this.appends.committed();
    }
  }

  destroy(): Promise<void> {
    return this.inner.destroy();
  }
}

/** The same dialect, with every statement and commit of its driver reported to `health`, and appends to `appends`. */
export function watchedDialect(dialect: Dialect, health: WriteHealth, appends: LogAppends): Dialect {
  return {
    createDriver: () => new WatchedDriver(dialect.createDriver(), health, appends),
    createQueryCompiler: () => dialect.createQueryCompiler(),
    createAdapter: () => dialect.createAdapter(),
    createIntrospector: (db: Kysely<unknown>) => dialect.createIntrospector(db),
  };
}
