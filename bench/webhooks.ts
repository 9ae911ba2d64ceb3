// Benchmark: webhook deliveries per second to a local receiver, and the
// latency from each event's `created_at` to its receipt, at that rate.
//
// Method: the gateway runs as its own process (`dist/main.js`, SQLite, or with
// BENCH_STORE=postgres a fresh database on the machine's PostgreSQL, dropped at
// the end; in-process sandbox, GATEWAY_SEND_INTERVAL_MS=0; BENCH_NODES=N runs N
// gateway processes on that database and one sandbox process, the messages
// spread over them). N
// paired devices have their webhook_url on a node:http receiver in this
// process. Load is real traffic: chat messages POSTed at a fixed rate
// (autocannon, spread over the devices and over 500 recipient phones), each
// yielding `message.sent`, `message.delivered` and, since the recipients'
// phones read what they get (sandbox `auto_read`), `message.read`: events
// recorded in the transactions of those status changes and delivered by the
// deliverer, signed, over HTTP. (`read=0` as 5th argument: phones that do not
// read, two events per message.) The receiver
// answers 200 at once, notes the arrival time, and verifies one signature in
// 50 with the Standard Webhooks library. Counted in the measuring window
// (after a warm-up): deliveries per second, and latency p50/p99/max of the
// events created in it. Afterwards: every event must arrive, none twice.
//
//   npm run build && node --import tsx bench/webhooks.ts [seconds] [messages_per_second] [devices] [read=1]
//
// BENCH_ANALYZE=1 (PostgreSQL): the benchmark's database is analyzed after the warm-up, as autovacuum does within
// its first minute on a new store. Without it, a run shorter than that measures the plans PostgreSQL made for
// empty tables (bench/README.md, Plans made for empty tables).
import autocannon from 'autocannon';
import { createServer } from 'node:http';
import { readFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { cpus } from 'node:os';
import { Webhook } from 'standardwebhooks';
import { api, chatRotation, machine, type Running, messagesRequest, pairHookedDevices } from './lib.js';
import { loadAverage, openBenchStore, spread, startNodes, startSandbox, storeKind } from './stores.js';
import { benchActivity } from './pg-activity.js';

const seconds = Number(process.argv[2] ?? 20);
const messageRate = Number(process.argv[3] ?? 1600);
const deviceCount = Number(process.argv[4] ?? 50);
const reading = (process.argv[5] ?? 'read=1') !== 'read=0';
const recipients = Array.from({ length: 500 }, (_, i) => `6286${String(10_000_000 + i * 10 + 7)}`);
const warmupSeconds = 3;
// BENCH_CONNECTIONS: the load generator's connections (each waits for its answer, so with a slow commit they bound the rate).
const connections = Number(process.env.BENCH_CONNECTIONS ?? 32);

// --- the receiver ------------------------------------------------------------------

const secrets = new Map<number, Webhook>();
const seen = new Map<string, number>();
const arrivals: Array<{ at: number; created: number }> = [];
let verifiedCount = 0;
let badSignatures = 0;
const receiver = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    const at = Date.now();
    const body = Buffer.concat(chunks).toString('utf8');
    const event = JSON.parse(body) as { id: string; created_at: string; device: { id: number } };
    seen.set(event.id, (seen.get(event.id) ?? 0) + 1);
    arrivals.push({ at, created: Date.parse(event.created_at) });
    if (arrivals.length % 50 === 0) {
      try {
        secrets.get(event.device.id)!.verify(body, req.headers as Record<string, string>);
        verifiedCount++;
      } catch {
        badSignatures++;
      }
    }
    res.writeHead(200).end();
  });
});
await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
const hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;

// --- the gateway ---------------------------------------------------------------------

const loadAtStart = loadAverage();
const kind = storeKind();
const nodeCount = Number(process.env.BENCH_NODES ?? 1);
const store = await openBenchStore(kind);
store.cli('migrate', '--create');
const sandbox: Running | null = nodeCount > 1 ? await startSandbox() : null;
// BENCH_NODE_ARGS, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof", profiles the gateway under this load.
const nodes = await startNodes(
  store,
  nodeCount,
  { GATEWAY_SEND_INTERVAL_MS: '0', GATEWAY_ALLOW_PRIVATE_URLS: 'true', LOG_LEVEL: 'info' },
  sandbox,
);
const gateway = { url: nodes.urls[0]! };
// The default account may hold 10 devices; raise it the way an operator would.
store.cli('accounts', 'set-limit', 'default', String(deviceCount));

const {
  phones,
  ids: deviceIds,
  secrets: secretOf,
} = await pairHookedDevices(gateway.url, deviceCount, 40_000_000, hookUrl);
for (const [id, secret] of secretOf) secrets.set(id, new Webhook(secret));

for (const phone of recipients) await api(gateway.url, 'POST', '/sandbox/phones', { phone, auto_read: reading });

if (nodeCount > 1)
  await spread(
    store,
    nodes.processes.map((_, i) => `node${i + 1}`),
    deviceCount,
  );

/** CPU time (user + system) the gateway processes have used so far, in ms; with the load average to judge a shared machine. */
async function gatewayCpuMs(): Promise<number> {
  let ms = 0;
  for (const node of nodes.processes) {
    const fields = (await readFile(`/proc/${node.child.pid}/stat`, 'utf8')).split(') ')[1]!.split(' ');
    ms += ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // clock ticks, 100 a second on Linux
  }
  return ms;
}

// --- load ------------------------------------------------------------------------------

const chats = chatRotation(phones, recipients, 'webhook bench');
const load = async (duration: number) => {
  const answers = await Promise.all(
    nodes.urls.map((url) =>
      autocannon({
        url,
        connections: Math.max(1, Math.round(connections / nodes.urls.length)),
        duration,
        overallRate: Math.max(1, Math.round(messageRate / nodes.urls.length)),
        requests: [
          // One count over every node and load run (chatRotation's).
          messagesRequest(chats),
        ],
      }),
    ),
  );
  return {
    '2xx': answers.reduce((sum, a) => sum + a['2xx'], 0),
    non2xx: answers.reduce((sum, a) => sum + a.non2xx, 0),
  };
};

const warm = await load(warmupSeconds);
await store.analyzeIfAsked();
const cpuStart = await gatewayCpuMs();
const activity = await benchActivity(store.env.DATABASE_URL);
const windowStart = Date.now();
const measured = await load(seconds);
const windowEnd = Date.now();
const cpuUsed = (await gatewayCpuMs()) - cpuStart;
const pgActivity = await activity?.stop();
const accepted = warm['2xx'] + measured['2xx'];

/** Every event the gateway recorded, from its delivery log. */
async function recorded(): Promise<number> {
  let total = 0;
  for (const id of deviceIds) {
    total += (await api(gateway.url, 'GET', `/devices/${id}/webhook-deliveries?per_page=1`)).meta.total as number;
  }
  return total;
}
// Drained: the receiver has every recorded event, and no more are being recorded (receipts come after sends).
let expected = await recorded();
const drainStart = Date.now();
while (Date.now() - drainStart < 120_000) {
  if (seen.size >= expected) {
    await new Promise((resolve) => setTimeout(resolve, 500));
    const again = await recorded();
    if (again === expected && seen.size >= expected) break;
    expected = again;
  }
  await new Promise((resolve) => setTimeout(resolve, 50));
}
await nodes.stop();
await sandbox?.stop();
await store.close();
await new Promise<void>((resolve) => receiver.close(() => resolve()));

// --- results ---------------------------------------------------------------------------

const inWindow = arrivals.filter((a) => a.at >= windowStart && a.at < windowEnd);
const latencies = arrivals
  .filter((a) => a.created >= windowStart && a.created < windowEnd)
  .map((a) => a.at - a.created)
  .sort((a, b) => a - b);
const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))] ?? null;
const duplicates = [...seen.values()].filter((count) => count > 1).length;

console.log(
  JSON.stringify(
    {
      benchmark: 'webhook delivery to a local receiver',
      machine: `${machine()}, ${cpus().length} CPUs (${cpus()[0]?.model ?? 'unknown'})`,
      store: kind,
      nodes: nodeCount,
      devices: deviceCount,
      offered_messages_per_second: messageRate,
      seconds,
      events_per_message: reading ? 3 : 2,
      messages_accepted: { in_window: measured['2xx'], total: accepted, non2xx: warm.non2xx + measured.non2xx },
      events_delivered_per_second: Math.round(inWindow.length / ((windowEnd - windowStart) / 1000)),
      latency_ms: { p50: pct(50), p99: pct(99), max: latencies.at(-1) ?? null, events: latencies.length },
      all_delivered: seen.size === expected,
      events_expected: expected,
      events_received: seen.size,
      duplicates,
      last_event_after_load_ms: (arrivals.at(-1)?.at ?? windowEnd) - windowEnd,
      signatures: { verified: verifiedCount, bad: badSignatures },
      gateway_cpu: {
        percent_of_one_core: Math.round((cpuUsed / (windowEnd - windowStart)) * 100),
        ms_per_event: Number((cpuUsed / Math.max(1, inWindow.length)).toFixed(3)),
      },
      load_average: { start: loadAtStart, end: loadAverage() },
      ...(pgActivity === undefined ? {} : { pg_activity: pgActivity }),
    },
    null,
    2,
  ),
);
