// Benchmark: what form bodies (docs/internals.md, Whatspie compatibility) cost the event loop at the body limit, against a JSON
// body of the same size, and how /healthz answers meanwhile.
//
// Method: the gateway runs as its own process (`dist/main.js`, SQLite, in-process sandbox). For
// each case, `parallel` clients post the same body of just under 1 MiB (the body limit) to
// POST /messages over node:http, `rounds` times each, while a probe requests /healthz in a loop.
// The baseline is a JSON chat of 1,000,000 characters (refused as 400 `Message too long`); the
// form cases are the same text form-encoded and as multipart, and the bodies that make a form
// parser work hardest: as many fields (2,048) and brackets (4,096) as allowed with the deepest
// names allowed (31 brackets), deep names past the bracket limit, one field past the field limit,
// 1 MiB of separators, bracket soup in names, a list of the most items allowed, a multipart body
// of the most parts allowed (256), and a multipart file part of 1 MiB.
// Reported per case: statuses, the answer time (p50, max), its p50 as a ratio of the JSON
// baseline's in the same run, and /healthz latency while the case ran.
//
//   npm run build && node --import tsx bench/form-bodies.ts [parallel=5] [rounds=4]
import { machine, percentile, postWhileProbing, startGateway } from './lib.js';

const parallel = Number(process.argv[2] ?? 5);
const rounds = Number(process.argv[3] ?? 4);
const DEVICE = '6281234567890';
const RECEIVER = '6289876543210';
const LIMIT = 1024 * 1024;
const BOUNDARY = 'benchBoundary';

async function runCase(base: string, name: string, body: Buffer, type: string, baseline?: number): Promise<number> {
  if (body.length > LIMIT) throw new Error(`${name}: ${body.length} bytes is over the body limit`);
  const { answers, statuses, health, probeErrors } = await postWhileProbing(base, body, type, parallel, rounds);
  const ms = answers.map((a) => a.ms);
  const p50 = percentile(ms, 50);
  const fmt = (n: number) => n.toFixed(1);
  const ratio = baseline === undefined ? '' : `  ×${(p50 / baseline).toFixed(2)} of JSON`;
  console.log(
    `${name.padEnd(44)} ${(body.length / 1024).toFixed(0).padStart(5)} KiB  status ${statuses.join(',')}  ` +
      `p50 ${fmt(p50)} ms max ${fmt(Math.max(...ms))} ms${ratio}  ` +
      `/healthz p50 ${fmt(percentile(health, 50))} p99 ${fmt(percentile(health, 99))} max ${fmt(Math.max(...health))} ms` +
      (probeErrors > 0 ? ` (failed ${probeErrors})` : ''),
  );
  return p50;
}

const URLENCODED = 'application/x-www-form-urlencoded';
const MULTIPART = `multipart/form-data; boundary=${BOUNDARY}`;
const head = `device=${DEVICE}&receiver=${RECEIVER}&type=chat`;
const text = 'a'.repeat(1_000_000);
const fields = (count: number, name: (i: number) => string, value = 'v') =>
  Array.from({ length: count }, (_, i) => `${name(i)}=${value}`).join('&');
const parts = (list: Array<[string, string]>, extra = '') =>
  list.map(([n, v]) => `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${n}"\r\n\r\n${v}\r\n`).join('') +
  extra +
  `--${BOUNDARY}--\r\n`;
/** A filler value that brings `prefix` + filler + `suffix` to just under the limit. */
const fill = (prefix: string, suffix = '') => 'a'.repeat(LIMIT - 64 - prefix.length - suffix.length);

const gateway = await startGateway();
gateway.child.on('exit', (code, signal) => console.log(`gateway exited: ${code} ${signal}`));
try {
  console.log(machine());
  console.log(`${parallel} parallel clients, ${rounds} rounds per case`);
  const json = Buffer.from(JSON.stringify({ device: DEVICE, receiver: RECEIVER, type: 'chat', message: text }));
  const base = await runCase(gateway.url, 'JSON chat, 1,000,000 characters (baseline)', json, 'application/json');
  const run = (name: string, body: string, type = URLENCODED) =>
    runCase(gateway.url, name, Buffer.from(body), type, base);

  await run('form chat, 1,000,000 characters', `${head}&message=${text}`);
  await run(
    'multipart chat, 1,000,000 characters',
    parts([
      ['device', DEVICE],
      ['receiver', RECEIVER],
      ['message', text],
    ]),
    MULTIPART,
  );
  const deep = (i: number) => `x${i}${'[a]'.repeat(31)}`;
  // The bracket limit (4,096 in all) allows 132 names 31 levels deep; the rest as flat fields.
  await run(
    '132 names 31 deep + 1,913 flat fields',
    `${head}&${fields(132, deep)}&${fields(1913, (i) => `f${i}`, 'v'.repeat(400))}`,
  );
  await run('2,048 fields 31 deep (refused: brackets)', `${head}&${fields(2045, deep, 'v'.repeat(300))}`);
  await run('2,049 fields (one over)', `${head}&${fields(2046, (i) => `f${i}`)}`);
  await run('1 MiB of separators', `${head}${'&'.repeat(LIMIT - 100)}`);
  await run('bracket soup names', `${head}&${fields(2000, (i) => `s${i}${'[['.repeat(200)}`)}`);
  await run('a list of 1,024 items', `${head}&${fields(1024, () => 'phones[]', 'v'.repeat(900))}`);
  const many = Array.from({ length: 253 }, (_, i): [string, string] => [`p${i}`, 'v'.repeat(3900)]);
  await run(
    'multipart, 256 parts',
    parts([['device', DEVICE], ['receiver', RECEIVER], ['message', 'x'], ...many]),
    MULTIPART,
  );
  const file = `--${BOUNDARY}\r\nContent-Disposition: form-data; name="photo"; filename="a.png"\r\nContent-Type: image/png\r\n\r\n${fill('', 'x'.repeat(300))}\r\n`;
  await run('multipart, a 1 MiB file part (refused)', parts([['device', DEVICE]], file), MULTIPART);
} finally {
  await gateway.stop();
}
