// Benchmark: a deep queue of one device across a restart (issue 25): how long the gateway takes to come back with
// N messages (default 100,000) queued for one device, and how fast it then drains them.
//
// Method: the gateway runs as its own process (`dist/main.js`; SQLite, or with BENCH_STORE=postgres a fresh
// database on the machine's PostgreSQL, dropped at the end; in-process sandbox). One device on the unlimited plan
// (STARTUP240K) is paired. The fill runs with GATEWAY_SEND_INTERVAL_MS=3600000: the lane sends the first message
// and then waits an hour, so everything accepted after it stays `pending` in the store. N chat messages are POSTed
// (autocannon, `connections` at once, 500 recipient phones). The gateway is stopped (SIGTERM, as an operator
// would) and started again on the same store with pacing off (GATEWAY_SEND_INTERVAL_MS=0). Measured from the
// moment the new process is spawned: its "Server listening" line, the first `GET /healthz` 200, the device
// `connected` (GET /devices/{id}), the first message leaving the queue (the store's count of `pending` messages
// falls), and the queue empty. Drain rate: the N messages over first-sent to empty. The bench polls every 5 ms
// until the first send, then counts `pending` every 100 ms (through the partial index on pending messages).
//
//   npm run build && node --import tsx bench/queued-restart.ts [messages] [connections]
//
// BENCH_NODE_ARGS (e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof") goes to both gateway processes. BENCH_DRAIN_SECONDS
// (default 900) ends the drain's measurement early: the rate is then what left the queue in that time, and
// `drained` is false.
import autocannon from 'autocannon';
import Database from 'better-sqlite3';
import { cpus } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { api, cpuMs, machine, pairDevice, messagesRequest } from './lib.js';
import { loadAverage, openBenchStore, startNodes, storeKind } from './stores.js';

const total = Number(process.argv[2] ?? 100_000);
const connections = Number(process.argv[3] ?? 50);
const drainLimitMs = Number(process.env.BENCH_DRAIN_SECONDS ?? 900) * 1000;
const kind = storeKind();
const phone = '6281355500017';
const recipients = Array.from({ length: 500 }, (_, i) => `6287${String(10_000_000 + i * 10 + 7)}`);

const loadAtStart = loadAverage();
const store = await openBenchStore(kind);

/** Messages still `pending` (any device: there is one). */
async function pendingCounter(): Promise<{ pending(): Promise<number>; close(): Promise<void> }> {
  if (kind === 'sqlite') {
    const db = new Database(join(store.env.GATEWAY_DATA_DIR!, 'gateway.sqlite'), { readonly: true });
    const statement = db.prepare("select count(*) as n from messages where status = 'pending'");
    return { pending: async () => (statement.get() as { n: number }).n, close: async () => void db.close() };
  }
  const client = new pg.Client({ connectionString: store.env.DATABASE_URL });
  await client.connect();
  return {
    pending: async () =>
      Number((await client.query("select count(*) as n from messages where status = 'pending'")).rows[0].n),
    close: () => client.end(),
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

try {
  store.cli('migrate', '--create');

  // --- fill ------------------------------------------------------------------------------------------------------
  let nodes = await startNodes(store, 1, { GATEWAY_SEND_INTERVAL_MS: '3600000', LOG_LEVEL: 'info' }, null);
  let url = nodes.urls[0]!;
  const deviceId = await pairDevice(url, phone);
  const fillStarted = Date.now();
  const fill = await autocannon({
    url,
    connections,
    amount: total + 1, // the first one is sent at once; the rest wait for the interval
    requests: [
      messagesRequest((i) => ({
        device: phone,
        receiver: recipients[i % recipients.length],
        type: 'chat',
        params: { text: `queued message ${i}` },
      })),
    ],
  });
  const fillSeconds = (Date.now() - fillStarted) / 1000;
  if (fill.non2xx > 0 || fill.errors > 0) throw new Error(`fill: ${fill.non2xx} non-2xx, ${fill.errors} errors`);
  const stopStarted = Date.now();
  await nodes.stop();
  const stopSeconds = (Date.now() - stopStarted) / 1000;

  const counter = await pendingCounter();
  const queued = await counter.pending();

  // --- restart ----------------------------------------------------------------------------------------------------
  const load = loadAverage();
  const spawned = Date.now();
  nodes = await startNodes(store, 1, { GATEWAY_SEND_INTERVAL_MS: '0', LOG_LEVEL: 'info' }, null);
  const listening = Date.now();
  url = nodes.urls[0]!;
  const pid = nodes.processes[0]!.child.pid!;
  let healthz: number | null = null;
  let connected: number | null = null;
  let firstSent: number | null = null;
  while (healthz === null || connected === null || firstSent === null) {
    const now = Date.now();
    if (now - spawned > 120_000) throw new Error('the gateway did not come back within 2 minutes');
    if (healthz === null && (await fetch(`${url}/healthz`)).status === 200) healthz = now;
    if (connected === null && (await api(url, 'GET', `/devices/${deviceId}`)).data.connected === true) connected = now;
    if (firstSent === null && (await counter.pending()) < queued) firstSent = now;
    await sleep(5);
  }
  // The CPU the new process spent until its first send: the start-up's own cost, whatever else loads the host.
  const cpuAtFirstSent = cpuMs(pid);
  let left = queued;
  while (left > 0 && Date.now() - firstSent < drainLimitMs) {
    await sleep(100);
    left = await counter.pending();
  }
  const empty = Date.now();
  const drainCpu = cpuMs(pid) - cpuAtFirstSent;
  await nodes.stop();
  await counter.close();

  const ms = (at: number) => at - spawned;
  console.log(
    JSON.stringify(
      {
        benchmark: 'deep queue of one device: restart and drain',
        machine: `${machine()}, ${cpus().length} CPUs (${cpus()[0]?.model ?? 'unknown'})`,
        store: kind,
        at: new Date(spawned).toISOString(),
        queued,
        fill: { seconds: fillSeconds, rate: Math.round(total / fillSeconds), stop_seconds: stopSeconds },
        load_average: { start: loadAtStart, restart: load, end: loadAverage() },
        restart_ms: {
          listening: ms(listening),
          healthz_200: ms(healthz),
          device_connected: ms(connected),
          first_sent: ms(firstSent),
          gateway_cpu_until_first_sent: cpuAtFirstSent,
        },
        drain: {
          drained: left === 0,
          sent: queued - left,
          seconds: (empty - firstSent) / 1000,
          rate: Math.round((queued - left) / ((empty - firstSent) / 1000)),
          gateway_cpu: Number((drainCpu / (empty - firstSent)).toFixed(2)),
          gateway_cpu_ms_per_message: Number((drainCpu / Math.max(1, queued - left)).toFixed(3)),
        },
      },
      null,
      2,
    ),
  );
} finally {
  await store.close();
}
