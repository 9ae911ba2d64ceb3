// Benchmark: the webhook deliverer alone, draining a backlog: deliveries per second with nothing else running.
//
// Method: the gateway runs as its own process (`dist/main.js`; SQLite, or BENCH_STORE=postgres a fresh database on
// the machine's PostgreSQL, dropped at the end; in-process sandbox). N paired devices have their webhook_url on a
// node:http receiver in this process that answers 200 at once. One message per device makes real `message.*`
// deliveries; then this script inserts a backlog of copies of them (new ids, due now) straight into
// `webhook_events`, in one transaction, as if a receiver had been down, and times until the receiver has every one:
// what the claim, the attempts and the outcomes cost, without the messages' own writes beside them. Counted: the
// rate, the gateway's CPU per delivery and, on PostgreSQL, the CPU of the gateway's server processes (read from
// /proc for the backends of the benchmark's database). Afterwards: every delivery must have arrived, none twice, and
// every row must be `delivered`.
//
//   npm run build && BENCH_STORE=postgres node --import tsx bench/webhook-drain.ts [deliveries] [devices]
import Database from 'better-sqlite3';
import { createServer } from 'node:http';
import { readFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { cpus } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { api, machine, pairDevice } from './lib.js';
import { loadAverage, openBenchStore, startNodes, storeKind } from './stores.js';

const total = Number(process.argv[2] ?? 30_000);
const deviceCount = Number(process.argv[3] ?? 50);
const perDevice = Math.ceil(total / deviceCount);

const seen = new Map<string, number>();
let arrived = 0;
let resolveAll: (() => void) | null = null;
const receiver = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    const id = req.headers['webhook-id'] as string;
    seen.set(id, (seen.get(id) ?? 0) + 1);
    arrived++;
    if (resolveAll !== null && id.includes('-drain-') && drained() >= expected) resolveAll();
    res.writeHead(200).end();
  });
});
await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
const hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
let expected = Infinity;
let drainedCount = 0;
const drained = () => ++drainedCount;

const loadAtStart = loadAverage();
const kind = storeKind();
const store = await openBenchStore(kind);
store.cli('migrate', '--create');
const nodes = await startNodes(
  store,
  1,
  { GATEWAY_SEND_INTERVAL_MS: '0', GATEWAY_ALLOW_PRIVATE_URLS: 'true', LOG_LEVEL: 'info' },
  null,
);
const gateway = nodes.urls[0]!;
store.cli('accounts', 'set-limit', 'default', String(deviceCount));
const phones: string[] = [];
for (let i = 0; i < deviceCount; i += 10) {
  const batch = Array.from(
    { length: Math.min(10, deviceCount - i) },
    (_, j) => `6285${String(40_000_000 + (i + j) * 10 + 7)}`,
  );
  const ids = await Promise.all(batch.map((phone) => pairDevice(gateway, phone)));
  for (const id of ids) await api(gateway, 'PATCH', `/devices/${id}`, { webhook_url: hookUrl });
  phones.push(...batch);
}
const recipient = '628610000007';
await api(gateway, 'POST', '/sandbox/phones', { phone: recipient, auto_read: true });
for (const phone of phones) {
  await api(gateway, 'POST', '/messages', { device: phone, receiver: recipient, type: 'chat', params: { text: 'x' } });
}
// Three events a message (sent, delivered, read): wait for them, so the backlog has a template per device.
for (const started = Date.now(); arrived < deviceCount * 3 && Date.now() - started < 30_000;) {
  await new Promise((resolve) => setTimeout(resolve, 50));
}

/** The statement that copies one delivered row per device `perDevice` times, due now; in the store's dialect. */
function backlogSql(now: number): string {
  const columns = `account_id, device_id, type, payload, url, status, attempts, next_attempt_at, locked_until, created_at, webhook_id`;
  const copied = `account_id, device_id, type, payload, url, 'pending', 0, ${now}, null, ${now}, webhook_id`;
  const templates = `select * from webhook_events where id in (select min(id) from webhook_events group by device_id)`;
  return kind === 'postgres'
    ? `insert into webhook_events (id, ${columns})
       select t.id || '-drain-' || g, ${copied} from (${templates}) t cross join generate_series(1, ${perDevice}) g`
    : `with recursive g(n) as (select 1 union all select n + 1 from g where n < ${perDevice})
       insert into webhook_events (id, ${columns})
       select t.id || '-drain-' || g.n, ${copied} from (${templates}) t cross join g`;
}

type Query = (text: string) => Promise<Array<Record<string, unknown>>>;
let query: Query;
let closeQuery: () => Promise<void>;
if (kind === 'postgres') {
  const client = new pg.Client({ connectionString: store.env.DATABASE_URL });
  await client.connect();
  query = async (text) => (await client.query(text)).rows as Array<Record<string, unknown>>;
  closeQuery = () => client.end();
} else {
  const db = new Database(join(store.env.GATEWAY_DATA_DIR!, 'gateway.sqlite'));
  db.pragma('busy_timeout = 10000');
  query = async (text) => {
    const statement = db.prepare(text);
    if (statement.reader) return statement.all() as Array<Record<string, unknown>>;
    statement.run();
    return [];
  };
  closeQuery = async () => {
    db.close();
  };
}

/** CPU time (user + system) of a process so far, in ms. */
async function cpuMs(pid: number): Promise<number> {
  try {
    const fields = (await readFile(`/proc/${pid}/stat`, 'utf8')).split(') ')[1]!.split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  } catch {
    return 0;
  }
}
/** The server processes serving the benchmark's database (PostgreSQL on this machine), by pid. */
async function serverPids(): Promise<number[]> {
  if (kind !== 'postgres') return [];
  const rows = await query(`select pid from pg_stat_activity where datname = current_database()`);
  return rows.map((r) => Number(r.pid));
}
const serverCpu = async (pids: number[]) => (await Promise.all(pids.map(cpuMs))).reduce((a, b) => a + b, 0);

await new Promise((resolve) => setTimeout(resolve, 1_000));
const before = arrived;
const pids = await serverPids();
const gatewayPid = nodes.processes[0]!.child.pid!;
const gatewayCpuStart = await cpuMs(gatewayPid);
const serverCpuStart = await serverCpu(pids);
const all = new Promise<void>((resolve) => {
  resolveAll = resolve;
});
await query(backlogSql(Date.now()));
const inserted = Date.now();
expected = perDevice * deviceCount;
const timeout = setTimeout(() => resolveAll?.(), 300_000);
await all;
clearTimeout(timeout);
const finished = Date.now();
const gatewayCpu = (await cpuMs(gatewayPid)) - gatewayCpuStart;
const serverCpuUsed = (await serverCpu(pids)) - serverCpuStart;
// Every row ended delivered once its outcome committed (the receiver can answer before the outcome is written).
let undelivered = -1;
for (const started = Date.now(); Date.now() - started < 30_000;) {
  undelivered = Number((await query(`select count(*) as n from webhook_events where status <> 'delivered'`))[0]!.n);
  if (undelivered === 0) break;
  await new Promise((resolve) => setTimeout(resolve, 200));
}
await closeQuery();
await nodes.stop();
await store.close();
await new Promise<void>((resolve) => receiver.close(() => resolve()));

const count = arrived - before;
const seconds = (finished - inserted) / 1000;
console.log(
  JSON.stringify(
    {
      benchmark: 'webhook deliverer draining a backlog',
      machine: `${machine()}, ${cpus().length} CPUs (${cpus()[0]?.model ?? 'unknown'})`,
      store: kind,
      devices: deviceCount,
      backlog: expected,
      seconds,
      deliveries_per_second: Math.round(expected / seconds),
      all_delivered: drainedCount >= expected && undelivered === 0,
      arrivals: count,
      duplicates: [...seen.values()].filter((n) => n > 1).length,
      gateway_cpu: {
        percent_of_one_core: Math.round((gatewayCpu / (finished - inserted)) * 100),
        ms_per_delivery: Number((gatewayCpu / expected).toFixed(3)),
      },
      ...(kind === 'postgres'
        ? {
            server_cpu: {
              percent_of_one_core: Math.round((serverCpuUsed / (finished - inserted)) * 100),
              ms_per_delivery: Number((serverCpuUsed / expected).toFixed(3)),
            },
          }
        : {}),
      load_average: { start: loadAtStart, end: loadAverage() },
    },
    null,
    2,
  ),
);
