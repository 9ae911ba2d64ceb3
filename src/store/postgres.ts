/**
 * The PostgreSQL dialect of the store: a node-postgres pool with bounds on
 * every wait, so a server that is down, restarting or frozen (SIGSTOP, a
 * network partition) makes callers fail within seconds instead of hanging.
 *
 * Owns: the pool, its timeouts, how PostgreSQL values come back to
 * JavaScript, and which statements are prepared by name on the server.
 * Must never: return 64-bit integers as strings to the rest of the code (all
 * our BIGINT values are epoch milliseconds or ids well inside 2^53); hand out
 * again a connection whose statement timed out (it may still be stuck in it).
 */
import { createHash } from 'node:crypto';
import pg from 'pg';
import { PostgresDialect, type PostgresPool, type PostgresPoolClient, type PostgresQueryResult } from 'kysely';
import { StoreTimeoutError, StoreUnavailableError, storeFault } from './faults.js';

pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value));

/** Bounds on waiting for the server; 0 means none. */
export interface PostgresTimeouts {
  /** Opening a connection, or waiting for a free one in the pool. */
  readonly connectMs: number;
  /** The server cancels a statement running longer (statement_timeout). */
  readonly statementMs: number;
  /** We stop waiting for an answer (a frozen server cancels nothing); the connection is then discarded. */
  readonly answerMs: number;
  /**
   * The server ends a session left inside a transaction this long (idle_in_transaction_session_timeout):
   * a process frozen or cut off mid-transaction must not keep its row locks, which would hold up other
   * nodes taking over its devices (docs/internals.md, Clusters). 0 means none.
   */
  readonly idleInTransactionMs?: number;
}

export const DEFAULT_POSTGRES_TIMEOUTS: PostgresTimeouts = {
  connectMs: 3_000,
  statementMs: 5_000,
  answerMs: 6_000,
  // Well inside a device lease (15 s), so a frozen node's locks are gone before its devices are taken over.
  idleInTransactionMs: 10_000,
};

/** While the server does not answer, how often one caller may try it again. */
const OUTAGE_TRIAL_INTERVAL_MS = 1_000;

/** Migrations may wait for another node's run (a lock) or take long on big tables; only connecting is bounded. */
export const MIGRATION_POSTGRES_TIMEOUTS: PostgresTimeouts = { connectMs: 10_000, statementMs: 0, answerMs: 0 };

/**
 * While the server is known not to answer (a connection or statement failed
 * for an outage and nothing has succeeded since), one caller at a time tries
 * it, at most one trial a second; the others fail at once instead of each
 * waiting out its own timeout.
 */
class OutageGate {
  private down = false;
  private trying = false;
  private triedAt = 0;

  /** True when the caller is the one trying a server that is down; throws when it is not its turn. */
  enter(): boolean {
    if (!this.down) return false;
    if (this.trying || Date.now() - this.triedAt < OUTAGE_TRIAL_INTERVAL_MS) throw new StoreUnavailableError();
    this.trying = true;
    return true;
  }

  leave(): void {
    this.trying = false;
    this.triedAt = Date.now();
  }

  answered(): void {
    this.down = false;
  }

  failed(error: unknown): void {
    if (storeFault(error)?.kind === 'unavailable') this.down = true;
  }
}

/**
 * Statements that run again and again (the per-message reads and writes, compiled once by
 * prepared.ts and bulk-insert.ts) go to the server as named prepared statements: each
 * connection parses and plans them once instead of at every call. That was about a third of
 * the server's CPU per message on the end-to-end benchmark. A text is named from its second
 * use, and at most MAX_NAMED texts per pool are, so statements built per call (lists of
 * varying length) cannot fill the server's memory. A named statement the server no longer
 * accepts (a migration run by another node changed a table under a `select *`) runs unnamed
 * from then on.
 */
const MAX_NAMED = 256;
/** Server errors after which a named statement must not be used again: result type changed; statement gone. */
const STALE_PLAN = new Set(['0A000', '26000']);
const CONTROL = /^\s*(begin|commit|rollback|savepoint|release)\b/i;

class StatementNames {
  /** Per text seen: its name, or null after its first use. */
  private readonly names = new Map<string, string | null>();
  private readonly never = new Set<string>();
  private named = 0;

  /** The name to run `sql` under, or undefined: run it unnamed. */
  nameOf(sql: string): string | undefined {
    const name = this.names.get(sql);
    if (typeof name === 'string') return name;
    if (this.named >= MAX_NAMED || this.never.has(sql) || CONTROL.test(sql)) return undefined;
    if (name === undefined) {
      // First use: remembered, not named (a statement used once should not stay on the server).
      if (this.names.size < 4 * MAX_NAMED) this.names.set(sql, null);
      return undefined;
    }
    const fresh = `s_${createHash('sha1').update(sql).digest('hex').slice(0, 24)}`;
    this.names.set(sql, fresh);
    this.named += 1;
    return fresh;
  }

  /** The server refused it by name: the text runs unnamed from now on. */
  refused(sql: string, error: unknown): void {
    const code = (error as { code?: unknown } | null)?.code;
    if (typeof code !== 'string' || !STALE_PLAN.has(code) || typeof this.names.get(sql) !== 'string') return;
    this.names.delete(sql);
    this.never.add(sql);
  }
}

/** A checked-out client whose every statement has a deadline. */
class BoundedClient implements PostgresPoolClient {
  /** Set when the connection can no longer be trusted (a statement timed out, the socket failed). */
  private broken: Error | null = null;
  private readonly onError = (error: Error) => {
    this.broken ??= error;
  };
  /** This check-out is the one trying a server that was down. */
  private trial = false;

  constructor(
    private readonly inner: pg.PoolClient,
    private readonly answerMs: number,
    private readonly gate: OutageGate,
    private readonly statementNames: StatementNames,
  ) {}

  /** Called on every check-out. */
  checkedOut(trial: boolean): this {
    this.trial = trial;
    // A checked-out pg client has no error listener; a socket error would otherwise be an uncaught 'error' event.
    this.inner.on('error', this.onError);
    return this;
  }

  private settle<T>(query: Promise<T>): Promise<T> {
    return query.then(
      (result) => {
        this.gate.answered();
        return result;
      },
      (error: unknown) => {
        this.gate.failed(error);
        throw error;
      },
    );
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
    const name = this.statementNames.nameOf(sql);
    const query: pg.QueryConfig = { text: sql, values: parameters as unknown[] };
    if (name !== undefined) query.name = name;
    const answer =
      this.answerMs <= 0
        ? (this.inner.query(query) as unknown as Promise<PostgresQueryResult<R>>)
        : this.bounded<R>(query);
    return this.settle(
      name === undefined
        ? answer
        : answer.catch((error: unknown) => {
            this.statementNames.refused(sql, error);
            throw error;
          }),
    );
  }

  private bounded<R>(query: pg.QueryConfig): Promise<PostgresQueryResult<R>> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        const error = new StoreTimeoutError('a statement', this.answerMs);
        this.broken ??= error;
        reject(error);
      }, this.answerMs);
      this.inner.query(query).then(
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
    if (this.trial) this.gate.leave();
    this.trial = false;
    this.inner.removeListener('error', this.onError);
    // With an error, the pool closes the connection instead of handing it out again.
    this.inner.release(this.broken ?? undefined);
  }
}

class BoundedPool implements PostgresPool {
  /** One wrapper per pooled connection (Kysely keeps its own per client object it is given). */
  private readonly wrappers = new WeakMap<pg.PoolClient, BoundedClient>();
  private readonly gate = new OutageGate();
  /** The pool's own: a store's names never depend on what another store in the same process ran. */
  private readonly statementNames = new StatementNames();

  constructor(
    readonly pool: pg.Pool,
    private readonly answerMs: number,
  ) {}

  async connect(): Promise<PostgresPoolClient> {
    const trial = this.gate.enter();
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (error) {
      this.gate.failed(error);
      if (trial) this.gate.leave();
      throw error;
    }
    let wrapper = this.wrappers.get(client);
    if (wrapper === undefined) {
      wrapper = new BoundedClient(client, this.answerMs, this.gate, this.statementNames);
      this.wrappers.set(client, wrapper);
    }
    return wrapper.checkedOut(trial);
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
    ...((timeouts.idleInTransactionMs ?? 0) > 0
      ? { idle_in_transaction_session_timeout: timeouts.idleInTransactionMs }
      : {}),
  });
  // An idle client losing its server must not crash the process; the pool replaces it.
  pool.on('error', () => undefined);
  // Nor may any client at any moment of its life: the pool and BoundedClient each listen only while a client is
  // theirs (idle, checked out), and a server shut down (57P01) once reached a client between the two in a test run.
  // What a failure means is still handled by them: a checked-out client is marked broken, an idle one replaced.
  pool.on('connect', (client) => client.on('error', () => undefined));
  return { dialect: new PostgresDialect({ pool: new BoundedPool(pool, timeouts.answerMs) }), pool };
}
