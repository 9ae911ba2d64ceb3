// Benchmark (issue 10, item 18): the gateway's memory while it accepts and
// sends large media. For each size given, a fresh gateway pairs one device
// per file, and that many file messages of the size are POSTed at once (one
// per device); the gateway downloads each from a local HTTP server, streams
// it into the store in chunks and answers; the devices' queues then send them
// at the same time through the in-process sandbox, which reads every file
// through (its inbox shows each file's size and SHA-256). Sampled every
// 100 ms from /proc: the gateway's RSS before, its peak while accepting,
// after accepting, its peak while sending, and at the end. Several sizes in
// one run (e.g. `10 10,90`) show whether memory follows file size.
//
// Method: the gateway runs as its own process (`dist/main.js`, or the script
// named by BENCH_GATEWAY, e.g. an older build to compare; SQLite unless
// DATABASE_URL is set, in-process sandbox, GATEWAY_ALLOW_PRIVATE_URLS=true
// for the local media server). The media server streams the bytes (a PDF
// header, then filler) with a Content-Length, without holding a file.
//
//   npm run build && node --import tsx bench/media-memory.ts [files] [megabytes[,megabytes...]]
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { TOKEN, api, machine, pairDevice, startPdfMediaServer, startProcess } from './lib.js';

const files = Number(process.argv[2] ?? 10);
const sizesMb = String(process.argv[3] ?? '90')
  .split(',')
  .map(Number);
const entry = process.env.BENCH_GATEWAY ?? 'dist/main.js';
const MiB = 1024 * 1024;

const { base: mediaBase, server: media } = await startPdfMediaServer();

async function run(megabytes: number) {
  const dataDir = await mkdtemp(join(tmpdir(), 'gw-bench-media-'));
  const gateway = await startProcess([entry], {
    PORT: '0',
    GATEWAY_DATA_DIR: dataDir,
    GATEWAY_BOOTSTRAP_TOKEN: TOKEN,
    GATEWAY_SEND_INTERVAL_MS: '0',
    GATEWAY_ALLOW_PRIVATE_URLS: 'true',
    LOG_LEVEL: 'info',
  });
  const pid = gateway.child.pid!;
  // Whatever happens below, the gateway process does not outlive the benchmark.
  const kill = () => gateway.child.kill('SIGKILL');
  process.once('exit', kill);
  // Numbers whose last four digits are not 0000-0004 (the sandbox's refusing, blocking and offline phones).
  const phones = Array.from({ length: files }, (_, i) => `6285600${String(21_111 + i)}`);
  const receiverOf = (i: number) => `6285699${String(21_111 + i)}`;
  for (const phone of phones) await pairDevice(gateway.url, phone, 'BUSINESS');

  const rssMb = async (): Promise<number> => {
    const status = await readFile(`/proc/${pid}/status`, 'utf8');
    return Math.round(Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024);
  };
  let peak = 0;
  const sampler = setInterval(() => {
    void rssMb().then((mb) => (peak = Math.max(peak, mb)));
  }, 100);

  await new Promise((resolve) => setTimeout(resolve, 500));
  const before = await rssMb();
  peak = before;
  const started = Date.now();
  // Refusals are counted, not fatal: on a loaded machine a large download can miss its 10 s deadline.
  const answers = await Promise.all(
    phones.map((phone, i) =>
      api(gateway.url, 'POST', '/messages', {
        device: phone,
        receiver: receiverOf(i),
        type: 'file',
        params: { document: { url: `${mediaBase}/${megabytes}.pdf` }, fileName: `big-${i}.pdf` },
      }).catch((error: Error) => ({ refused: error.message })),
    ),
  );
  const refused = answers
    .filter((answer) => 'refused' in answer)
    .map((answer) => (answer as { refused: string }).refused);
  const acceptedMs = Date.now() - started;
  const peakAccepting = peak;
  const afterAccepting = await rssMb();
  peak = afterAccepting;

  const accepted = answers.flatMap((answer, i) =>
    'data' in answer ? [{ id: answer.data.id as string, receiver: receiverOf(i) }] : [],
  );
  let statuses: string[] = [];
  for (;;) {
    statuses = await Promise.all(
      accepted.map(async ({ id }) => (await api(gateway.url, 'GET', `/messages/${id}`)).data.status as string),
    );
    if (statuses.every((status) => status !== 'pending')) break;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  const sentMs = Date.now() - started;
  const peakSending = peak;
  // Every accepted file reached its phone whole: the sandbox's inbox shows the size it read through.
  const arrived = await Promise.all(
    accepted.map(async ({ id, receiver }) => {
      const inbox = (await api(gateway.url, 'GET', `/sandbox/phones/${receiver}`)).data.inbox as any[];
      return inbox.find((e) => e.message_id === id)?.content?.size === megabytes * MiB;
    }),
  );
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const atEnd = await rssMb();
  clearInterval(sampler);
  await gateway.stop();
  process.off('exit', kill);
  await rm(dataDir, { recursive: true, force: true });
  return {
    files: `${files} × ${megabytes} MB, one device each`,
    accepted: accepted.length,
    refused,
    sent: statuses.filter((s) => s === 'sent' || s === 'delivered' || s === 'read').length,
    arrived_whole: arrived.filter(Boolean).length,
    all_answered_ms: acceptedMs,
    all_sent_ms: sentMs,
    gateway_rss_mb: {
      before,
      peak_while_accepting: peakAccepting,
      after_accepting: afterAccepting,
      peak_while_sending: peakSending,
      at_end: atEnd,
    },
  };
}

const runs = [];
for (const megabytes of sizesMb) runs.push(await run(megabytes));
await new Promise<void>((resolve) => media.close(() => resolve()));

console.log(
  JSON.stringify(
    {
      benchmark: 'parallel file messages from a local server, accepted and then sent at once by their devices',
      gateway: entry,
      machine: `${machine()}, ${cpus().length} CPUs (${cpus()[0]?.model ?? 'unknown'}), load ${loadavg()[0]?.toFixed(2)}`,
      store: process.env.DATABASE_URL === undefined ? 'sqlite' : 'postgres',
      runs,
    },
    null,
    2,
  ),
);
