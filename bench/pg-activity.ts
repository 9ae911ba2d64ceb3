// What the gateway's PostgreSQL sessions are doing while a benchmark runs: samples
// `pg_stat_activity` every 50 ms on one database, and sums up how often each kind of
// session state was seen: running a statement, idle in a transaction (waiting for the
// gateway), waiting for a lock (and which statement waits), waiting for the WAL flush of
// a commit. Numbers are sessions per sample on average.
//
// In a benchmark: BENCH_PG_ACTIVITY=1 makes webhooks.ts and destinations.ts sample their
// database during the measured window and print the summary with their results
// (`pg_activity`). Alone, beside any benchmark, on the `bench_*` databases:
//
//   node --import tsx bench/pg-activity.ts [seconds=30] [database=bench_%]
//
// Read-only: it only selects from the statistics views of the shared server.
import pg from 'pg';
import { pathToFileURL } from 'node:url';

const INTERVAL_MS = 50;

interface Session {
  readonly state: string | null;
  readonly wait_event_type: string | null;
  readonly wait_event: string | null;
  readonly query: string | null;
  readonly blocked_by: number;
}

export interface ActivitySummary {
  readonly samples: number;
  readonly sessions_per_sample: number;
  readonly sessions_by_state: Record<string, number>;
  readonly active_statements: Record<string, number>;
  readonly lock_waits: Record<string, number>;
}

/** A statement's first words, enough to know it without its parameters. */
const shape = (query: string | null) => (query ?? '').replace(/\s+/g, ' ').replace(/\$\d+/g, '?').slice(0, 90);

/** Samples until `stop()`, which answers the summary. `database` is a LIKE pattern. */
export async function watchActivity(url: string, database: string): Promise<{ stop(): Promise<ActivitySummary> }> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  let samples = 0;
  let sessionsSeen = 0;
  const byState = new Map<string, number>();
  const byStatement = new Map<string, number>();
  const lockWaits = new Map<string, number>();
  const bump = (map: Map<string, number>, key: string) => map.set(key, (map.get(key) ?? 0) + 1);

  const sample = async (): Promise<void> => {
    const { rows } = await client.query<Session>(
      `select state, wait_event_type, wait_event, query, cardinality(pg_blocking_pids(pid)) as blocked_by
         from pg_stat_activity
        where datname like $1 and pid <> pg_backend_pid() and backend_type = 'client backend'`,
      [database],
    );
    samples += 1;
    for (const row of rows) {
      sessionsSeen += 1;
      const wait = row.wait_event_type === null ? 'on cpu' : `${row.wait_event_type}/${row.wait_event}`;
      bump(byState, `${row.state ?? '?'} | ${row.state === 'active' ? wait : '-'}`);
      if (row.state === 'active') bump(byStatement, `${wait} | ${shape(row.query)}`);
      if (row.blocked_by > 0) bump(lockWaits, `${row.wait_event ?? '?'} | ${shape(row.query)}`);
    }
  };
  const top = (map: Map<string, number>, n: number) =>
    Object.fromEntries(
      [...map]
        .sort((a, b) => b[1] - a[1])
        .slice(0, n)
        .map(([key, count]) => [key, Number((count / Math.max(1, samples)).toFixed(3))]),
    );

  let stopping = false;
  const loop = (async () => {
    while (!stopping) {
      const started = Date.now();
      await sample();
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, INTERVAL_MS - (Date.now() - started))));
    }
  })();
  return {
    async stop() {
      stopping = true;
      await loop;
      await client.end();
      return {
        samples,
        sessions_per_sample: Number((sessionsSeen / Math.max(1, samples)).toFixed(2)),
        sessions_by_state: top(byState, 20),
        active_statements: top(byStatement, 25),
        lock_waits: top(lockWaits, 10),
      };
    },
  };
}

/** With BENCH_PG_ACTIVITY=1 and a PostgreSQL store: sampling of the store's database, else null. */
export async function benchActivity(
  databaseUrl: string | undefined,
): Promise<{ stop(): Promise<ActivitySummary> } | null> {
  if (process.env.BENCH_PG_ACTIVITY !== '1' || databaseUrl === undefined) return null;
  return watchActivity(databaseUrl, new URL(databaseUrl).pathname.slice(1));
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const seconds = Number(process.argv[2] ?? 30);
  const url = process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const watch = await watchActivity(url, process.argv[3] ?? 'bench_%');
  let stopped = false;
  process.once('SIGINT', () => {
    stopped = true;
  });
  const end = Date.now() + seconds * 1000;
  while (!stopped && Date.now() < end) await new Promise((resolve) => setTimeout(resolve, 100));
  console.log(JSON.stringify(await watch.stop(), null, 2));
}
