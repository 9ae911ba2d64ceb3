// Benchmark (issue 26, Measure): incoming media throughput. Sandbox phones send `images` images of `kb` KB each
// (`POST /sandbox/phones/{phone}/messages`, `type: image`, `media.url` on a real local HTTP server) to a few paired
// devices of a real listening gateway (the built `dist/main.js`, sandbox in the gateway process,
// GATEWAY_ALLOW_PRIVATE_URLS=true for the local media server). The clock runs from the first phone message until
// every image's row in `incoming_media` is `stored`; the store is counted directly (SQLite read-only, or the
// PostgreSQL database). Reported: incoming messages stored per second, media stored per second and bytes per
// second, the gateway's RSS (before, peak while it worked, and after, sampled every 100 ms from /proc), and the
// media server's count of bytes served (each image fetched once, unless retried).
//
//   npm run build && node --import tsx bench/incoming-media.ts [images] [kb] [devices] [in flight]
//   BENCH_STORE=postgres ... (a fresh database on the machine's PostgreSQL, dropped at the end)
import Database from 'better-sqlite3';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { cpus } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { api, cpuMs, machine, pairDevice } from './lib.js';
import { loadAverage, openBenchStore, startNodes, storeKind, type Nodes } from './stores.js';

const images = Number(process.argv[2] ?? 1000);
const kb = Number(process.argv[3] ?? 200);
const deviceCount = Number(process.argv[4] ?? 4);
const inFlight = Number(process.argv[5] ?? 20);
const size = kb * 1024;

// Each image its own bytes: a JPEG start marker, the image's number, then random filler shared by all.
const filler = randomBytes(size);
let servedBytes = 0;
let served = 0;
const media = createServer((req, res) => {
  const n = Number(/^\/img\/(\d+)\.jpg$/.exec(req.url ?? '')?.[1] ?? -1);
  if (n < 0) return void res.writeHead(404).end();
  const body = Buffer.from(filler);
  body[0] = 0xff;
  body[1] = 0xd8;
  body.writeUInt32BE(n, 2);
  res.writeHead(200, { 'content-type': 'image/jpeg', 'content-length': String(body.length) });
  res.end(body);
  servedBytes += body.length;
  served++;
});
await new Promise<void>((resolve) => media.listen(0, '127.0.0.1', resolve));
const mediaBase = `http://127.0.0.1:${(media.address() as AddressInfo).port}`;

const kind = storeKind();
const loadAtStart = loadAverage();
const store = await openBenchStore(kind);
let nodes: Nodes | null = null;
let pgClient: pg.Client | null = null;
let sqlite: Database.Database | null = null;
try {
  store.cli('migrate', '--create');
  nodes = await startNodes(store, 1, { LOG_LEVEL: 'info', GATEWAY_ALLOW_PRIVATE_URLS: 'true' }, null);
  const gateway = nodes.processes[0]!;
  const base = gateway.url;
  const pid = gateway.child.pid!;
  // Last four digits never 0000-0004: those are the sandbox's refusing, blocking and offline numbers.
  const devices = Array.from({ length: deviceCount }, (_, i) => `6281${String(50_000_000 + i * 10 + 7)}`);
  for (const phone of devices) await pairDevice(base, phone);

  if (kind === 'postgres') {
    pgClient = new pg.Client({ connectionString: store.env.DATABASE_URL });
    await pgClient.connect();
  } else {
    sqlite = new Database(join(store.env.GATEWAY_DATA_DIR!, 'gateway.sqlite'), { readonly: true });
  }
  const count = async (query: string): Promise<number> => {
    if (pgClient !== null) return Number((await pgClient.query(query)).rows[0].n);
    return (sqlite!.prepare(query).get() as { n: number }).n;
  };
  const incomingStored = () => count("select count(*) as n from messages where direction = 'incoming'");
  const mediaByStatus = async () => {
    const statuses = ['stored', 'pending', 'failed', 'too_large'] as const;
    // One after another: a pg client runs one query at a time.
    const counts: number[] = [];
    for (const status of statuses) {
      counts.push(await count(`select count(*) as n from incoming_media where status = '${status}'`));
    }
    return Object.fromEntries(statuses.map((status, i) => [status, counts[i]!])) as Record<
      (typeof statuses)[number],
      number
    >;
  };

  const rssMb = async (): Promise<number> => {
    const status = await readFile(`/proc/${pid}/status`, 'utf8');
    return Math.round(Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024);
  };
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const rssBefore = await rssMb();
  let peak = rssBefore;
  const sampler = setInterval(() => {
    void rssMb().then((mb) => (peak = Math.max(peak, mb)));
  }, 100);

  const load = loadAverage();
  const cpuBefore = cpuMs(pid);
  const started = Date.now();
  let messagesAllStoredAt = 0;
  const watcher = (async () => {
    for (;;) {
      if (messagesAllStoredAt === 0 && (await incomingStored()) >= images) messagesAllStoredAt = Date.now();
      const byStatus = await mediaByStatus();
      if (byStatus.stored + byStatus.failed + byStatus.too_large >= images || Date.now() - started > 900_000) {
        return { byStatus, at: Date.now() };
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  })();
  // The phones send, `inFlight` messages at a time, each to the next device in turn.
  let next = 0;
  let refused = 0;
  const phoneSends = async () => {
    for (let n = next++; n < images; n = next++) {
      const from = `6283${String(60_000_000 + (n % 100) * 10 + 7)}`;
      await api(base, 'POST', `/sandbox/phones/${from}/messages`, {
        to: devices[n % devices.length],
        type: 'image',
        text: `image ${n}`,
        media: { url: `${mediaBase}/img/${n}.jpg`, mimetype: 'image/jpeg' },
      }).catch(() => refused++);
    }
  };
  await Promise.all(Array.from({ length: inFlight }, phoneSends));
  const sentAt = Date.now();
  const { byStatus, at: doneAt } = await watcher;
  if (messagesAllStoredAt === 0) messagesAllStoredAt = doneAt;
  const gatewayCpuMs = cpuMs(pid) - cpuBefore;
  const peakWhileWorking = peak;
  await new Promise((resolve) => setTimeout(resolve, 2000));
  const rssAfter = await rssMb();
  clearInterval(sampler);
  const seconds = (doneAt - started) / 1000;
  const storedBytes = await count("select coalesce(sum(size), 0) as n from incoming_media where status = 'stored'");

  console.log(
    JSON.stringify(
      {
        benchmark: 'incoming images through the sandbox until every one is stored',
        machine: `${machine()}, ${cpus().length} CPUs (${cpus()[0]?.model ?? 'unknown'})`,
        store: kind,
        images,
        image_bytes: size,
        devices: deviceCount,
        phone_messages_in_flight: inFlight,
        load_average: { start: loadAtStart, at_measure: load, end: loadAverage() },
        phone_messages_refused: refused,
        phone_messages_sent_seconds: (sentAt - started) / 1000,
        messages_stored_seconds: (messagesAllStoredAt - started) / 1000,
        all_media_stored_seconds: seconds,
        media_status: byStatus,
        messages_stored_per_second: Math.round(images / ((messagesAllStoredAt - started) / 1000)),
        media_stored_per_second: Math.round(byStatus.stored / seconds),
        stored_megabytes_per_second: Number((Number(storedBytes) / seconds / 1024 / 1024).toFixed(2)),
        stored_bytes: Number(storedBytes),
        media_server: { requests: served, bytes: servedBytes },
        gateway_cpu: Number((gatewayCpuMs / (doneAt - started)).toFixed(2)),
        gateway_rss_mb: { before: rssBefore, peak_while_working: peakWhileWorking, after: rssAfter },
      },
      null,
      2,
    ),
  );
} finally {
  sqlite?.close();
  await pgClient?.end();
  await nodes?.stop();
  await store.close();
  await new Promise<void>((resolve) => media.close(() => resolve()));
}
