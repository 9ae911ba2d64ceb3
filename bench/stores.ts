// Where a benchmark's gateways keep their data, and how many of them run.
//
// BENCH_STORE=postgres: a fresh database `bench_<random>` on the machine's
// PostgreSQL (BENCH_POSTGRES_URL, default postgres://postgres@127.0.0.1:5432/postgres),
// dropped at the end, also when the benchmark fails. Otherwise a SQLite data
// directory in a temp dir. The shared server is only ever asked to create and
// drop the benchmark's own database: never stopped, never reconfigured.
//
// startNodes: N gateway processes (`dist/main.js`) on that store, each on its
// own port with its own GATEWAY_SERVER_NAME and GATEWAY_ADVERTISE_URL, all on
// one sandbox process (`gateway sandbox serve`) when one is given, else the
// in-process sandbox (one node only).
//
// Owns: creating and dropping the benchmark database; counting delivered
// messages in whichever store runs; the lease spread of a cluster.
// Must never: touch a database it did not create.
import Database from 'better-sqlite3';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer } from 'node:net';
import pg from 'pg';
import { TOKEN, startProcess, type Running } from './lib.js';

export type StoreKind = 'sqlite' | 'postgres';

export interface BenchStore {
  readonly kind: StoreKind;
  /** Environment every gateway process and CLI call on this store gets. */
  readonly env: Record<string, string>;
  /** Messages in status `delivered`. */
  delivered(): Promise<number>;
  /** Connected devices per holding node (PostgreSQL), or {sole: n} (SQLite). */
  connectedPerNode(): Promise<Record<string, number>>;
  /**
   * With BENCH_ANALYZE=1, on PostgreSQL: `ANALYZE` of the whole database, as autovacuum does within its first minute
   * on a new store (its naptime); a benchmark shorter than that would otherwise measure plans made for empty tables.
   * Otherwise, and on SQLite: nothing.
   */
  analyzeIfAsked(): Promise<void>;
  /** Runs the gateway CLI on this store. */
  cli(...args: string[]): void;
  /** Drops the database (PostgreSQL); closes what this process opened. Safe to call twice. */
  close(): Promise<void>;
}

export function storeKind(): StoreKind {
  return process.env.BENCH_STORE === 'postgres' ? 'postgres' : 'sqlite';
}

const ADMIN_URL = process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export async function openBenchStore(kind: StoreKind): Promise<BenchStore> {
  const dataDir = await mkdtemp(join(tmpdir(), 'gw-bench-'));
  const base = { GATEWAY_DATA_DIR: dataDir, GATEWAY_BOOTSTRAP_TOKEN: TOKEN };
  const cliOn =
    (env: Record<string, string>) =>
    (...args: string[]) => {
      execFileSync(process.execPath, ['dist/cli/main.js', ...args], {
        env: { ...process.env, ...env },
        stdio: 'ignore',
      });
    };
  if (kind === 'sqlite') {
    let db: Database.Database | null = null;
    const open = () => (db ??= new Database(join(dataDir, 'gateway.sqlite'), { readonly: true }));
    return {
      kind,
      env: base,
      cli: cliOn(base),
      delivered: async () =>
        (open().prepare("select count(*) as n from messages where status = 'delivered'").get() as { n: number }).n,
      analyzeIfAsked: async () => undefined,
      connectedPerNode: async () => ({
        sole: (open().prepare('select count(*) as n from devices where connected = 1').get() as { n: number }).n,
      }),
      close: async () => {
        db?.close();
        db = null;
      },
    };
  }
  const name = `bench_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  const env = { ...base, DATABASE_URL: url.toString() };
  const db = new pg.Client({ connectionString: env.DATABASE_URL });
  await db.connect();
  let closed = false;
  const drop = async () => {
    if (closed) return;
    closed = true;
    await db.end().catch(() => undefined);
    const again = new pg.Client({ connectionString: ADMIN_URL });
    await again.connect();
    // Gateways still connected (a benchmark that failed midway) are cut off first.
    await again.query(`drop database if exists ${name} with (force)`);
    await again.end();
  };
  onFailure(drop);
  return {
    kind,
    env,
    cli: cliOn(env),
    delivered: async () =>
      Number((await db.query("select count(*) as n from messages where status = 'delivered'")).rows[0].n),
    analyzeIfAsked: async () => {
      if (process.env.BENCH_ANALYZE === '1') await db.query('analyze');
    },
    connectedPerNode: async () => {
      const { rows } = await db.query<{ node: string; n: string }>(`
        select l.node, count(*) as n from device_leases l
        join devices d on d.id = l.device_id and d.connected = 1 and d.server_name = l.node
        where d.paired_status = 'PAIRED' group by l.node`);
      return Object.fromEntries(rows.map((r) => [r.node, Number(r.n)]));
    },
    close: drop,
  };
}

/** Run however the benchmark ends (an exception, Ctrl-C): processes stopped first, then the database dropped. */
const cleanups: Array<() => Promise<void>> = [];
let cleanupArmed = false;

function cleanUp(): Promise<void> {
  return cleanups
    .splice(0)
    .reverse()
    .reduce((done, step) => done.then(step).catch(() => undefined), Promise.resolve());
}

export function onFailure(step: () => Promise<void>): void {
  cleanups.push(step);
  if (cleanupArmed) return;
  cleanupArmed = true;
  const onSignal = (signal: NodeJS.Signals) => {
    void cleanUp().finally(() => process.kill(process.pid, signal));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  // A top-level await that throws in an ES module arrives here too.
  process.once('uncaughtException', (error) => {
    console.error(error);
    void cleanUp().finally(() => process.exit(1));
  });
  process.once('unhandledRejection', (error) => {
    console.error(error);
    void cleanUp().finally(() => process.exit(1));
  });
}

export interface Nodes {
  readonly urls: string[];
  readonly processes: Running[];
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** `gateway sandbox serve` as its own process; its ws:// URL. */
export async function startSandbox(): Promise<Running> {
  const sandbox = await startProcess(['dist/cli/main.js', 'sandbox', 'serve', '--port', '0'], {});
  onFailure(() => sandbox.stop());
  return sandbox;
}

/**
 * Starts `count` gateway processes on the store, named `<prefix>1`..`<prefix>N`. `sandbox`: the
 * sandbox process they share (required for more than one node). BENCH_NODE_ARGS (e.g.
 * "--cpu-prof --cpu-prof-dir=/tmp/prof") goes to each; BENCH_GATEWAY names another entry script than
 * `dist/main.js` (an older build to compare).
 */
export async function startNodes(
  store: BenchStore,
  count: number,
  env: Record<string, string>,
  sandbox: Running | null,
  prefix = 'node',
): Promise<Nodes> {
  if (count > 1 && (store.kind !== 'postgres' || sandbox === null)) {
    throw new Error('more than one node needs BENCH_STORE=postgres and a sandbox process');
  }
  const nodeArgs = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const processes = await Promise.all(
    Array.from({ length: count }, async (_, i) => {
      const port = await freePort();
      return startProcess([...nodeArgs, process.env.BENCH_GATEWAY ?? 'dist/main.js'], {
        ...store.env,
        HOST: '127.0.0.1',
        PORT: String(port),
        GATEWAY_SERVER_NAME: `${prefix}${i + 1}`,
        GATEWAY_ADVERTISE_URL: `http://127.0.0.1:${port}`,
        ...(sandbox === null ? {} : { GATEWAY_NETWORK: `sandbox+${sandbox.url}` }),
        ...env,
      });
    }),
  );
  for (const p of processes) onFailure(() => p.stop());
  return {
    urls: processes.map((p) => p.url),
    processes,
    stop: async () => {
      await Promise.all(processes.map((p) => p.stop()));
    },
  };
}

/**
 * Waits until `devices` devices are connected and, on a cluster, the leases are spread as the
 * cluster spreads them (no node above ceil(devices / N), so none below what that leaves); answers
 * the seconds it took.
 */
export async function spread(store: BenchStore, names: readonly string[], devices: number, timeoutMs = 300_000) {
  const started = Date.now();
  const share = devices - (names.length - 1) * Math.ceil(devices / names.length);
  for (;;) {
    const counts = await store.connectedPerNode();
    const total = Object.values(counts).reduce((a, b) => a + b, 0);
    const even = store.kind === 'sqlite' || names.every((name) => (counts[name] ?? 0) >= share);
    if (total === devices && even) return { seconds: (Date.now() - started) / 1000, counts };
    if (Date.now() - started > timeoutMs) {
      throw new Error(`devices not spread within ${timeoutMs} ms: ${JSON.stringify(counts)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

export function loadAverage(): number[] {
  return loadavg().map((value) => Number(value.toFixed(2)));
}
