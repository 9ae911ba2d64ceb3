/**
 * What the store's own traffic says about its health: a write that failed for
 * a store fault (full disk, read-only file, lost server) leaves the store
 * "faulted" until a later write commits. Readiness reads it, so a store that
 * answers `select 1` but cannot write is not reported ready.
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
  constructor(
    readonly inner: DatabaseConnection,
    private readonly health: WriteHealth,
  ) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    try {
      const result = await this.inner.executeQuery<R>(query);
      if (!this.inTransaction && WRITES.has(query.query.kind)) this.health.wrote();
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
      if (connection instanceof WatchedConnection) connection.inTransaction = false;
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

  releaseConnection(connection: DatabaseConnection): Promise<void> {
    return this.inner.releaseConnection(unwrap(connection));
  }

  destroy(): Promise<void> {
    return this.inner.destroy();
  }
}

/** The same dialect, with every statement and commit of its driver reported to `health`. */
export function watchedDialect(dialect: Dialect, health: WriteHealth): Dialect {
  return {
    createDriver: () => new WatchedDriver(dialect.createDriver(), health),
    createQueryCompiler: () => dialect.createQueryCompiler(),
    createAdapter: () => dialect.createAdapter(),
    createIntrospector: (db: Kysely<unknown>) => dialect.createIntrospector(db),
  };
}
