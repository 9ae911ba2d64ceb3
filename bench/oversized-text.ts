// Benchmark: how long the gateway takes to refuse an oversized text, and how /healthz answers
// meanwhile (issue 10 item 1).
//
// Method: the gateway runs as its own process (`dist/main.js`, SQLite, in-process sandbox). For
// each case, `parallel` clients post the same body over node:http, `rounds` times each, while a
// probe requests /healthz in a loop. Cases: a chat text of 1,000,000 ASCII characters (a body just
// under the 1 MB body limit, refused as 400 `Message too long`), the same of 62,500 emoji with a
// skin tone (4 UTF-16 units each), an image caption of 1,000,000 characters, and a 16 MB text
// (over the body limit: 413 `Payload too large`, the connection closed once the answer is out).
// Reported per case: the refusal time (p50, max, from the first byte sent to the answer) and the
// /healthz latency while the case ran (p50, p99, max, count).
//
//   npm run build && node --import tsx bench/oversized-text.ts [parallel=5] [rounds=4]
import { machine, percentile, postWhileProbing, startGateway } from './lib.js';

const parallel = Number(process.argv[2] ?? 5);
const rounds = Number(process.argv[3] ?? 4);
const DEVICE = '6281234567890';
const RECEIVER = '6289876543210';

async function runCase(base: string, name: string, body: Buffer) {
  const run = await postWhileProbing(base, body, 'application/json', parallel, rounds);
  const { statuses, health, probeErrors } = run;
  const ms = run.answers.map((a) => a.ms);
  const fmt = (n: number) => n.toFixed(1);
  console.log(
    `${name.padEnd(28)} ${(body.length / 1e6).toFixed(2).padStart(6)} MB  status ${statuses.join(',')}  ` +
      `refusal p50 ${fmt(percentile(ms, 50))} ms max ${fmt(Math.max(...ms))} ms  ` +
      `/healthz p50 ${fmt(percentile(health, 50))} p99 ${fmt(percentile(health, 99))} max ${fmt(Math.max(...health))} ms (n=${health.length}, failed ${probeErrors})`,
  );
}

const json = (value: unknown) => Buffer.from(JSON.stringify(value));
const chat = (text: string) => json({ device: DEVICE, receiver: RECEIVER, type: 'chat', message: text });

const gateway = await startGateway();
gateway.child.on('exit', (code, signal) => console.log(`gateway exited: ${code} ${signal}`));
try {
  console.log(machine());
  console.log(`${parallel} parallel clients, ${rounds} rounds per case`);
  await runCase(gateway.url, 'chat, 1 MB ASCII', chat('a'.repeat(1_000_000)));
  await runCase(gateway.url, 'chat, 62,500 emoji', chat('👍🏽'.repeat(62_500)));
  await runCase(
    gateway.url,
    'image caption, 1 MB',
    json({
      device: DEVICE,
      receiver: RECEIVER,
      type: 'image',
      params: { image: { url: 'https://example.com/a.png' }, caption: 'c'.repeat(1_000_000) },
    }),
  );
  await runCase(gateway.url, 'chat, 16 MB (over body limit)', chat('a'.repeat(16_000_000)));
} finally {
  await gateway.stop();
}
