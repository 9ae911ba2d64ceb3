// Benchmark: end-to-end rate with pacing off. 1,000 paired sandbox devices,
// 100,000 chat messages accepted over HTTP, timed from the first acceptance
// until every one is `delivered` (counted in the store). Also the gateway's
// memory per connected device.
//   npm run build && node --import tsx bench/e2e.ts [devices] [messages] [connections]
import autocannon from 'autocannon';
import Database from 'better-sqlite3';
import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TOKEN, machine, pairDevice, startProcess } from './lib.js';

const devices = Number(process.argv[2] ?? 1000);
const total = Number(process.argv[3] ?? 100_000);
const connections = Number(process.argv[4] ?? 50);

const dataDir = await mkdtemp(join(tmpdir(), 'gw-e2e-'));
const env = {
  PORT: '0',
  GATEWAY_DATA_DIR: dataDir,
  GATEWAY_BOOTSTRAP_TOKEN: TOKEN,
  GATEWAY_SEND_INTERVAL_MS: '0',
  LOG_LEVEL: 'warn',
};
// The bootstrap account may hold 10 devices by default; raise it the way an operator would.
execFileSync(process.execPath, ['dist/cli/main.js', 'migrate'], { env: { ...process.env, ...env } });
execFileSync(process.execPath, ['dist/cli/main.js', 'accounts', 'create', 'bench', '--max-devices', '1'], {
  env: { ...process.env, ...env },
});
// BENCH_NODE_ARGS, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof", profiles the gateway under this load.
const nodeArgs = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);
const gateway = await startProcess([...nodeArgs, 'dist/main.js'], { ...env, LOG_LEVEL: 'info' });
execFileSync(process.execPath, ['dist/cli/main.js', 'accounts', 'set-limit', 'default', String(devices)], {
  env: { ...process.env, ...env },
});

async function rssKb(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
}

const pid = gateway.child.pid!;
const rssBefore = await rssKb(pid);
const phones: string[] = [];
for (let i = 0; i < devices; i += 20) {
  const batch = Array.from(
    { length: Math.min(20, devices - i) },
    (_, j) => `6281${String(30_000_000 + (i + j) * 10 + 7)}`,
  );
  await Promise.all(batch.map((phone) => pairDevice(gateway.url, phone)));
  phones.push(...batch);
}
global.gc?.();
const rssPaired = await rssKb(pid);

const db = new Database(join(dataDir, 'gateway.sqlite'), { readonly: true });
const delivered = db.prepare("select count(*) as n from messages where status = 'delivered'");

let sent = 0;
const started = Date.now();
const result = await autocannon({
  url: gateway.url,
  connections,
  amount: total,
  requests: [
    {
      method: 'POST',
      path: '/messages',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      setupRequest: (request: any) => {
        const n = sent++;
        request.body = JSON.stringify({
          device: phones[n % phones.length],
          // Last digits never 0000-0004: those are the sandbox's magic numbers.
          receiver: `6282${String(10_000_000 + (n % 5000) * 10 + 7)}`,
          type: 'chat',
          params: { text: `message ${n}` },
        });
        return request;
      },
    },
  ],
});
const acceptedAt = Date.now();
let count = 0;
while ((count = (delivered.get() as { n: number }).n) < total) {
  if (Date.now() - acceptedAt > 300_000) break;
  await new Promise((resolve) => setTimeout(resolve, 100));
}
const doneAt = Date.now();
const rssEnd = await rssKb(pid);
db.close();
await gateway.stop();

console.log(
  JSON.stringify(
    {
      benchmark: 'end to end, pacing off',
      machine: machine(),
      devices,
      messages: total,
      connections,
      accepted_2xx: result['2xx'],
      non2xx: result.non2xx,
      acceptance_seconds: (acceptedAt - started) / 1000,
      acceptance_rate: Math.round(total / ((acceptedAt - started) / 1000)),
      delivered: count,
      accepted_to_all_delivered_seconds: (doneAt - started) / 1000,
      end_to_end_rate: Math.round(count / ((doneAt - started) / 1000)),
      rss_mb: {
        start: Math.round(rssBefore / 1024),
        paired: Math.round(rssPaired / 1024),
        end: Math.round(rssEnd / 1024),
      },
      rss_kb_per_device: Math.round((rssPaired - rssBefore) / devices),
    },
    null,
    2,
  ),
);
