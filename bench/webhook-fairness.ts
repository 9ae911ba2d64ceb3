// Benchmark (issue 10, item 17): one dead receiver must not delay everyone's
// webhooks. A device whose receiver refuses connections has a backlog of
// BACKLOG due events; meanwhile another device sends a message every 100 ms,
// and we measure how long each of its events takes from `created_at` to its
// arrival at a healthy receiver, and the gateway's RSS and CPU.
//
// Method: the gateway runs as its own process (`dist/main.js`, SQLite unless
// DATABASE_URL is set, in-process sandbox). The dead device's events are made
// through the API (chat messages; `message.sent` and `message.delivered`
// each) while its webhook URL points at a closed port. The gateway is then
// stopped, every one of those deliveries is made due at once in the store (as
// after a long outage), and the gateway is started again: a fresh process
// that knows nothing of the receiver yet, facing BACKLOG due rows. The healthy
// device then sends for `seconds`.
//
//   npm run build && node --import tsx bench/webhook-fairness.ts [backlog_events] [seconds]
import autocannon from 'autocannon';
import Database from 'better-sqlite3';
import { execFileSync } from 'node:child_process';
import { createServer } from 'node:http';
import { mkdtemp, readFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { TOKEN, api, machine, pairDevice, startProcess, type Running } from './lib.js';

const backlog = Number(process.argv[2] ?? 20_000);
const seconds = Number(process.argv[3] ?? 20);

// --- receivers: one healthy, one port with nothing listening -------------------------

const arrivals = new Map<string, { at: number; created: number }>();
const healthy = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    const event = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id: string; created_at: string };
    if (!arrivals.has(event.id)) arrivals.set(event.id, { at: Date.now(), created: Date.parse(event.created_at) });
    res.writeHead(200).end();
  });
});
await new Promise<void>((resolve) => healthy.listen(0, '127.0.0.1', resolve));
const healthyUrl = `http://127.0.0.1:${(healthy.address() as AddressInfo).port}/hooks`;
const closed = createServer();
await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
const deadUrl = `http://127.0.0.1:${(closed.address() as AddressInfo).port}/hooks`;
await new Promise<void>((resolve) => closed.close(() => resolve()));

// --- the gateway -----------------------------------------------------------------------

const dataDir = await mkdtemp(join(tmpdir(), 'gw-bench-fairness-'));
const env = {
  PORT: '0',
  GATEWAY_DATA_DIR: dataDir,
  GATEWAY_BOOTSTRAP_TOKEN: TOKEN,
  GATEWAY_SEND_INTERVAL_MS: '0',
  GATEWAY_ALLOW_PRIVATE_URLS: 'true',
  LOG_LEVEL: 'info',
};
const start = () => startProcess(['dist/main.js'], env);
let gateway: Running = await start();

const deadPhone = '6285500000017';
const finePhone = '6285500000027';
const deadId = await pairDevice(gateway.url, deadPhone);
const fineId = await pairDevice(gateway.url, finePhone);
await api(gateway.url, 'PATCH', `/devices/${deadId}`, { webhook_url: deadUrl });
await api(gateway.url, 'PATCH', `/devices/${fineId}`, { webhook_url: healthyUrl });

// Two events per message (sent, delivered); the recipients do not read.
let n = 0;
await autocannon({
  url: gateway.url,
  connections: 16,
  amount: Math.ceil(backlog / 2),
  requests: [
    {
      method: 'POST',
      path: '/messages',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      setupRequest: (request: any) => {
        request.body = JSON.stringify({
          device: deadPhone,
          receiver: `6286${String(10_000_000 + (n++ % 500) * 10 + 7)}`,
          type: 'chat',
          params: { text: 'to a dead receiver' },
        });
        return request;
      },
    },
  ],
});
const total = async () =>
  (await api(gateway.url, 'GET', `/devices/${deadId}/webhook-deliveries?per_page=1&status=pending`)).meta
    .total as number;
for (let i = 0; i < 600 && (await total()) < backlog; i++) await new Promise((resolve) => setTimeout(resolve, 100));
await gateway.stop();

// Every delivery of the dead device due now, as after a long outage.
const now = Date.now();
if (process.env.DATABASE_URL === undefined) {
  const db = new Database(join(dataDir, 'gateway.sqlite'));
  db.prepare(
    `update webhook_events set next_attempt_at = ?, locked_until = null where device_id = ? and status = 'pending'`,
  ).run(now - 60_000, deadId);
  db.close();
} else {
  const client = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await client.connect();
  await client.query(
    `update webhook_events set next_attempt_at = $1, locked_until = null where device_id = $2 and status = 'pending'`,
    [now - 60_000, deadId],
  );
  await client.end();
}

// --- measure -----------------------------------------------------------------------------

gateway = await start();
const pid = gateway.child.pid!;
async function sample(): Promise<{ rssMb: number; cpuMs: number }> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const fields = (await readFile(`/proc/${pid}/stat`, 'utf8')).split(') ')[1]!.split(' ');
  return {
    rssMb: Math.round(Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024),
    cpuMs: (Number(fields[11]) + Number(fields[12])) * 10,
  };
}
const first = await sample();
const began = Date.now();
const sent: string[] = [];
let peakRss = first.rssMb;
const sampler = setInterval(() => {
  void sample().then((s) => (peakRss = Math.max(peakRss, s.rssMb)));
}, 250);
// The device's connection comes back from its stored session after the restart.
for (let i = 0; i < 500; i++) {
  if ((await api(gateway.url, 'GET', `/devices/${fineId}`)).data.connected) break;
  await new Promise((resolve) => setTimeout(resolve, 10));
}
while (Date.now() - began < seconds * 1000) {
  const answer = await api(gateway.url, 'POST', '/messages', {
    device: finePhone,
    receiver: '6286999990007',
    type: 'chat',
    params: { text: 'fair share' },
  });
  sent.push(answer.data.id as string);
  await new Promise((resolve) => setTimeout(resolve, 100));
}
await new Promise((resolve) => setTimeout(resolve, 2000));
clearInterval(sampler);
const last = await sample();
const wall = Date.now() - began;
const deadAttempts = async () => {
  const page = await api(gateway.url, 'GET', `/devices/${deadId}/webhook-deliveries?per_page=100`);
  return (page.data as Array<{ attempts: unknown[] }>).reduce((sum, d) => sum + d.attempts.length, 0);
};
const attemptsOnNewest100 = await deadAttempts();
const stillPending = await total();
await gateway.stop();
await new Promise<void>((resolve) => healthy.close(() => resolve()));

const latencies = [...arrivals.values()].map((a) => a.at - a.created).sort((a, b) => a - b);
const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))] ?? null;
console.log(
  JSON.stringify(
    {
      benchmark: 'another device’s webhook latency beside a dead receiver’s backlog',
      machine: `${machine()}, ${cpus().length} CPUs (${cpus()[0]?.model ?? 'unknown'}), load ${loadavg()[0]?.toFixed(2)}`,
      store: process.env.DATABASE_URL === undefined ? 'sqlite' : 'postgres',
      dead_backlog_due_at_start: stillPending >= backlog ? backlog : `${stillPending} still pending at the end`,
      seconds,
      healthy_events: { expected: sent.length * 2, received: latencies.length },
      healthy_latency_ms: { p50: pct(50), p99: pct(99), max: latencies.at(-1) ?? null },
      dead_receiver_attempts_on_its_newest_100_events: attemptsOnNewest100,
      gateway: {
        rss_mb: { at_start: first.rssMb, peak: peakRss, at_end: last.rssMb },
        cpu_cores_average: Number(((last.cpuMs - first.cpuMs) / wall).toFixed(2)),
      },
    },
    null,
    2,
  ),
);
execFileSync('rm', ['-rf', dataDir]);
