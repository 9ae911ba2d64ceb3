// Benchmark (issue 22, item 6): queued media in the store. A gateway (its own
// process, SQLite) with one device whose queue is held (send interval of an
// hour, after a first text took the lane's free send) accepts N file messages
// of M MB at once, each downloaded from a local HTTP server; they stay queued.
// Measured: the gateway's peak RSS growth while accepting (sampled every
// 100 ms from /proc), the growth of the database file and its WAL, and the
// media bytes the store says it holds (`gateway_media_stored_bytes`, when the
// build has it). Then the queue is let go (send interval 0): every message is
// sent, and the store should hold no media bytes and, once space is reclaimed,
// the file should be back near its size before. Then the same files are queued
// again (the file should not grow by more than it did the first time), and the
// device is deleted, which fails them (their bytes go again).
//
//   npm run build && node --import tsx bench/media-spool.ts [files] [megabytes]
//
// BENCH_GATEWAY=<path to main.js> runs another build (e.g. main's, to compare); BENCH_AT_ONCE=n posts n files at a
// time instead of all at once.
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { TOKEN, api, machine, pairDevice, startPdfMediaServer, startProcess } from './lib.js';

const files = Number(process.argv[2] ?? 10);
const megabytes = Number(process.argv[3] ?? 90);
const entry = process.env.BENCH_GATEWAY ?? 'dist/main.js';
// How many POSTs are in flight at once (default all): on a loaded host 1 keeps each download within its 10 s deadline.
const atOnce = Math.max(1, Number(process.env.BENCH_AT_ONCE ?? files));
const MiB = 1024 * 1024;
const HOUR_MS = 3_600_000;

const { base: mediaBase, server: media } = await startPdfMediaServer();
const mediaUrl = `${mediaBase}/${megabytes}.pdf`;

const dataDir = await mkdtemp(join(tmpdir(), 'gw-bench-spool-'));
const dbFile = join(dataDir, 'gateway.sqlite');
const gateway = await startProcess([entry], {
  PORT: '0',
  GATEWAY_DATA_DIR: dataDir,
  GATEWAY_BOOTSTRAP_TOKEN: TOKEN,
  GATEWAY_ALLOW_PRIVATE_URLS: 'true',
  LOG_LEVEL: 'info',
});
const pid = gateway.child.pid!;
const kill = () => gateway.child.kill('SIGKILL');
process.once('exit', kill);

const mb = (bytes: number) => Math.round((bytes / MiB) * 10) / 10;
const sizeOf = async (file: string) => (await stat(file).catch(() => ({ size: 0 }))).size;
const files_ = async () => ({ db_mb: mb(await sizeOf(dbFile)), wal_mb: mb(await sizeOf(`${dbFile}-wal`)) });
const rssMb = async () =>
  Math.round(Number(/VmRSS:\s+(\d+)/.exec(await readFile(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024);
async function heldMb(): Promise<number | null> {
  const res = await fetch(`${gateway.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
  const line = /^gateway_media_stored_bytes (\d+(?:\.\d+)?(?:e\+\d+)?)$/m.exec(await res.text());
  return line === null ? null : mb(Number(line[1]));
}
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const phone = '6285600031111';
const receiver = '6285699031111';
const deviceId = await pairDevice(gateway.url, phone, 'BUSINESS');
const statusOf = async (id: string) => (await api(gateway.url, 'GET', `/messages/${id}`)).data.status as string;
async function until(what: string, check: () => Promise<boolean>, timeoutMs = 600_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(200);
  }
}
/** Holds the device's queue: the next send waits an hour behind one just made (a text, the first time). */
async function holdQueue(first: boolean): Promise<void> {
  await api(gateway.url, 'PATCH', `/devices/${deviceId}`, { send_interval_ms: HOUR_MS });
  if (!first) return;
  const text = await api(gateway.url, 'POST', '/messages', {
    device: phone,
    receiver,
    type: 'chat',
    params: { text: 'x' },
  });
  await until('the first text sent', async () => (await statusOf(text.data.id)) !== 'pending');
}

/** Queues the files at once; answers the accepted ids, the refusals, the time and the peak RSS over `before`. */
async function queueFiles(round: number) {
  const before = await rssMb();
  let peak = before;
  const sampler = setInterval(() => void rssMb().then((now) => (peak = Math.max(peak, now))), 100);
  const started = Date.now();
  const post = (i: number) =>
    api(gateway.url, 'POST', '/messages', {
      device: phone,
      receiver,
      type: 'file',
      params: { document: { url: mediaUrl }, fileName: `big-${round}-${i}.pdf` },
    }).catch((error: Error) => ({ refused: error.message }));
  const answers: any[] = [];
  for (let start = 0; start < files; start += atOnce) {
    const batch = Array.from({ length: Math.min(atOnce, files - start) }, (_, i) => post(start + i));
    answers.push(...(await Promise.all(batch)));
  }
  const ms = Date.now() - started;
  clearInterval(sampler);
  const ids = answers.flatMap((answer) => ('data' in answer ? [answer.data.id as string] : []));
  const refused = answers.flatMap((answer) => ('refused' in answer ? [answer.refused as string] : []));
  return { ids, refused, ms, rss_before_mb: before, rss_peak_growth_mb: peak - before };
}

/**
 * Waits for the space of deleted media to be given back (the gateway looks every 30 s and keeps 32 MiB free):
 * until the file is within 40 MiB of `heldMb` over its size when empty, or 90 s have passed. Answers the file
 * then and the seconds waited.
 */
async function settled(emptyMb: number, heldMb: number) {
  const started = Date.now();
  let now = await files_();
  while (now.db_mb > emptyMb + heldMb + 40 && Date.now() - started < 90_000) {
    await sleep(1000);
    now = await files_();
  }
  return { ...now, waited_s: Math.round((Date.now() - started) / 1000) };
}

await holdQueue(true);
const empty = await files_();
const first = await queueFiles(1);
const pending = await Promise.all(first.ids.map(statusOf));
const queued = { files: await files_(), held_mb: await heldMb() };

// Let the queue go: every file is read back from the store and sent; then its bytes go.
await api(gateway.url, 'PATCH', `/devices/${deviceId}`, { send_interval_ms: 0 });
await until('every file sent', async () => (await Promise.all(first.ids.map(statusOf))).every((s) => s !== 'pending'));
const sentStatuses = await Promise.all(first.ids.map(statusOf));
const afterSent = { files: await files_(), held_mb: await heldMb() };
const afterReclaim = { files: await settled(empty.db_mb, 0), held_mb: await heldMb() };

// The same again: the space freed is used again.
await holdQueue(false);
const second = await queueFiles(2);
const requeued = { files: await files_(), held_mb: await heldMb() };

// Deleting the device fails its queue (DECISIONS 13): the bytes go again.
await api(gateway.url, 'DELETE', `/devices/${deviceId}`);
await until('every file failed', async () =>
  (await Promise.all(second.ids.map(statusOf))).every((s) => s === 'failed'),
);
const afterFailed = { files: await settled(empty.db_mb, 0), held_mb: await heldMb() };

await gateway.stop();
process.off('exit', kill);
await new Promise<void>((resolve) => media.close(() => resolve()));
await rm(dataDir, { recursive: true, force: true });

const total = (f: { db_mb: number; wal_mb: number }) => Math.round((f.db_mb + f.wal_mb) * 10) / 10;
console.log(
  JSON.stringify(
    {
      benchmark: `${files} file messages of ${megabytes} MiB queued (${atOnce} at a time) to a device whose queue is held, then sent`,
      gateway: entry,
      machine: `${machine()}, ${cpus().length} CPUs (${cpus()[0]?.model ?? 'unknown'}), load ${loadavg()[0]?.toFixed(2)}`,
      store: 'sqlite',
      queued: {
        accepted: first.ids.length,
        refused: first.refused,
        still_pending: pending.filter((s) => s === 'pending').length,
        all_answered_ms: first.ms,
        rss_before_mb: first.rss_before_mb,
        rss_peak_growth_mb: first.rss_peak_growth_mb,
        file_before: empty,
        file_queued: queued.files,
        file_growth_mb: Math.round((total(queued.files) - total(empty)) * 10) / 10,
        media_held_mb: queued.held_mb,
      },
      sent: {
        statuses: [...new Set(sentStatuses)],
        file_right_after: afterSent.files,
        media_held_mb: afterSent.held_mb,
        file_after_reclaim: afterReclaim.files,
      },
      queued_again: {
        accepted: second.ids.length,
        rss_peak_growth_mb: second.rss_peak_growth_mb,
        file: requeued.files,
        file_growth_over_first_queue_mb: Math.round((total(requeued.files) - total(queued.files)) * 10) / 10,
        media_held_mb: requeued.held_mb,
      },
      failed_by_device_delete: { file_after_reclaim: afterFailed.files, media_held_mb: afterFailed.held_mb },
    },
    null,
    2,
  ),
);
