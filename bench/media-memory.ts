// Benchmark (issue 10, item 18): the gateway's memory while it accepts large
// media. Ten file messages of about 90 MB each are POSTed at once; the gateway
// downloads each from a local HTTP server, streams it into the store in
// chunks, answers, and then sends them one after another from the device's
// queue. Sampled every 100 ms from /proc: the gateway's RSS before, its peak
// while accepting, its peak while sending, and at the end.
//
// Method: the gateway runs as its own process (`dist/main.js`, SQLite unless
// DATABASE_URL is set, in-process sandbox, GATEWAY_ALLOW_PRIVATE_URLS=true for
// the local media server). The media server streams the bytes (a PDF header,
// then filler) with a Content-Length, without holding a file in memory.
//
//   npm run build && node --import tsx bench/media-memory.ts [files] [megabytes]
import { createServer } from 'node:http';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { TOKEN, api, machine, pairDevice, startProcess } from './lib.js';

const files = Number(process.argv[2] ?? 10);
const megabytes = Number(process.argv[3] ?? 90);
const size = megabytes * 1024 * 1024;

const block = Buffer.alloc(1024 * 1024, 0x2e);
block.write('%PDF-1.7\n', 0, 'latin1');
const filler = Buffer.alloc(1024 * 1024, 0x2e);
const media = createServer((_req, res) => {
  res.writeHead(200, { 'content-type': 'application/pdf', 'content-length': String(size) });
  let sent = 0;
  const pump = (): void => {
    while (sent < size) {
      const chunk = (sent === 0 ? block : filler).subarray(0, Math.min(filler.length, size - sent));
      sent += chunk.length;
      if (!res.write(chunk)) {
        res.once('drain', pump);
        return;
      }
    }
    res.end();
  };
  pump();
});
await new Promise<void>((resolve) => media.listen(0, '127.0.0.1', resolve));
const fileUrl = `http://127.0.0.1:${(media.address() as AddressInfo).port}/big.pdf`;

const dataDir = await mkdtemp(join(tmpdir(), 'gw-bench-media-'));
const gateway = await startProcess(['dist/main.js'], {
  PORT: '0',
  GATEWAY_DATA_DIR: dataDir,
  GATEWAY_BOOTSTRAP_TOKEN: TOKEN,
  GATEWAY_SEND_INTERVAL_MS: '0',
  GATEWAY_ALLOW_PRIVATE_URLS: 'true',
  LOG_LEVEL: 'info',
});
const pid = gateway.child.pid!;
// Whatever happens below, the gateway process does not outlive the benchmark.
process.once('exit', () => gateway.child.kill('SIGKILL'));
const phone = '6285600000017';
await pairDevice(gateway.url, phone, 'BUSINESS');

async function rssMb(): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Math.round(Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024);
}
let peak = 0;
const sampler = setInterval(() => {
  void rssMb().then((mb) => (peak = Math.max(peak, mb)));
}, 100);

await new Promise((resolve) => setTimeout(resolve, 500));
const before = await rssMb();
peak = before;
const started = Date.now();
// Refusals are counted, not fatal: on a loaded machine a 90 MB download can miss its 10 s deadline.
const answers = await Promise.all(
  Array.from({ length: files }, (_, i) =>
    api(gateway.url, 'POST', '/messages', {
      device: phone,
      receiver: `62856999${String(10_000 + i)}`,
      type: 'file',
      params: { document: { url: fileUrl }, fileName: `big-${i}.pdf` },
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

const ids = answers.flatMap((answer) => ('data' in answer ? [answer.data.id as string] : []));
for (;;) {
  const statuses = await Promise.all(
    ids.map(async (id) => (await api(gateway.url, 'GET', `/messages/${id}`)).data.status),
  );
  if (statuses.every((status) => status !== 'pending')) break;
  await new Promise((resolve) => setTimeout(resolve, 200));
}
const sentMs = Date.now() - started;
const peakSending = peak;
await new Promise((resolve) => setTimeout(resolve, 1000));
const atEnd = await rssMb();
clearInterval(sampler);
await gateway.stop();
await new Promise<void>((resolve) => media.close(() => resolve()));
await rm(dataDir, { recursive: true, force: true });

console.log(
  JSON.stringify(
    {
      benchmark: `${files} parallel file messages of ${megabytes} MB from a local server`,
      machine: `${machine()}, ${cpus().length} CPUs (${cpus()[0]?.model ?? 'unknown'}), load ${loadavg()[0]?.toFixed(2)}`,
      store: process.env.DATABASE_URL === undefined ? 'sqlite' : 'postgres',
      accepted: ids.length,
      refused,
      all_answered_ms: acceptedMs,
      all_sent_ms: sentMs,
      gateway_rss_mb: {
        before,
        peak_while_accepting: peakAccepting,
        after_accepting: afterAccepting,
        peak_while_sending: peakSending,
        at_end: atEnd,
      },
    },
    null,
    2,
  ),
);
