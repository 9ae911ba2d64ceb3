/**
 * The PostgreSQL dialect of the store: a node-postgres pool with bounds on
 * every wait, so a server that is down, restarting or frozen (SIGSTOP, a
 * network partition) makes callers fail within seconds instead of hanging.
 *
 * Owns: the pool, its timeouts, and how PostgreSQL values come back to
 * JavaScript.
 * Must never: return 64-bit integers as strings to the rest of the code (all
 * our BIGINT values are epoch milliseconds or ids well inside 2^53); hand out
 * again a connection whose statement timed out (it may still be stuck in it).
 */
import pg from 'pg';
import { PostgresDialect, type PostgresPool, type PostgresPoolClient, type PostgresQueryResult } from 'kysely';
import { StoreTimeoutError } from './faults.js';

pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value));

/** Bounds on waiting for the server; 0 means none. */
export interface PostgresTimeouts {
  /** Opening a connection, or waiting for a free one in the pool. */
  readonly connectMs: number;
  /** The server cancels a statement running longer (statement_timeout). */
  readonly statementMs: number;
  /** We stop waiting for an answer (a frozen server cancels nothing); the connection is then discarded. */
  readonly answerMs: number;
}

export const DEFAULT_POSTGRES_TIMEOUTS: PostgresTimeouts = { connectMs: 3_000, statementMs: 5_000, answerMs: 6_000 };

/** Migrations may wait for another node's run (a lock) or take long on big tables; only connecting is bounded. */
export const MIGRATION_POSTGRES_TIMEOUTS: PostgresTimeouts = { connectMs: 10_000, statementMs: 0, answerMs: 0 };

/** A checked-out client whose every statement has a deadline. */
class BoundedClient implements PostgresPoolClient {
  /** Set when the connection can no longer be trusted (a statement timed out, the socket failed). */
  private broken: Error | null = null;
  private readonly onError = (error: Error) => {
    this.broken ??= error;
  };

  constructor(
    private readonly inner: pg.PoolClient,
    private readonly answerMs: number,
  ) {}

  /** Called on every check-out. */
  checkedOut(): this {
    // A checked-out pg client has no error listener; a socket error would otherwise be an uncaught 'error' event.
    this.inner.on('error', this.onError);
    return this;
  }

  query<R>(sql: string, parameters: ReadonlyArray<unknown>): Promise<PostgresQueryResult<R>>;
  /** Streaming (cursors) is not configured for the store's dialect, so Kysely never passes one. */
  query(cursor: never): never;
  query<R>(sql: string, parameters?: ReadonlyArray<unknown>): Promise<PostgresQueryResult<R>> {
    if (this.broken !== null) {
      // Discarding the connection rolls its transaction back on the server; nothing to wait for.
      if (/^\s*rollback\b/i.test(sql)) return Promise.resolve({ command: 'SELECT', rowCount: 0, rows: [] });
      return Promise.reject(this.broken);
    }
    if (this.answerMs <= 0) {
      return this.inner.query(sql, parameters as unknown[]) as unknown as Promise<PostgresQueryResult<R>>;
    }
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        const error = new StoreTimeoutError('a statement', this.answerMs);
        this.broken ??= error;
        reject(error);
      }, this.answerMs);
      this.inner.query(sql, parameters as unknown[]).then(
        (result) => {
          clearTimeout(timer);
          resolve(result as unknown as PostgresQueryResult<R>);
        },
        (error: unknown) => {
          clearTimeout(timer);
          reject(error as Error);
        },
      );
    });
  }

  release(): void {
    this.inner.removeListener('error', this.onError);
    // With an error, the pool closes the connection instead of handing it out again.
    this.inner.release(this.broken ?? undefined);
  }
}

class BoundedPool implements PostgresPool {
  /** One wrapper per pooled connection (Kysely keeps its own per client object it is given). */
  private readonly wrappers = new WeakMap<pg.PoolClient, BoundedClient>();

  constructor(
    readonly pool: pg.Pool,
    private readonly answerMs: number,
  ) {}

  async connect(): Promise<PostgresPoolClient> {
    const client = await this.pool.connect();
    let wrapper = this.wrappers.get(client);
    if (wrapper === undefined) {
      wrapper = new BoundedClient(client, this.answerMs);
      this.wrappers.set(client, wrapper);
    }
    return wrapper.checkedOut();
  }

  end(): Promise<void> {
    return this.pool.end();
  }
}

export function openPostgres(
  url: string,
  { poolSize = 10, timeouts = DEFAULT_POSTGRES_TIMEOUTS }: { poolSize?: number; timeouts?: PostgresTimeouts } = {},
): { dialect: PostgresDialect; pool: pg.Pool } {
  const pool = new pg.Pool({
    connectionString: url,
    max: poolSize,
    ...(timeouts.connectMs > 0 ? { connectionTimeoutMillis: timeouts.connectMs } : {}),
    ...(timeouts.statementMs > 0 ? { statement_timeout: timeouts.statementMs } : {}),
  });
  // An idle client losing its server must not crash the process; the pool replaces it.
  pool.on('error', () => undefined);
  return { dialect: new PostgresDialect({ pool: new BoundedPool(pool, timeouts.answerMs) }), pool };
}
