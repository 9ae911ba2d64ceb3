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
import { request } from 'node:http';
import { TOKEN, machine, startGateway } from './lib.js';

const parallel = Number(process.argv[2] ?? 5);
const rounds = Number(process.argv[3] ?? 4);
const DEVICE = '6281234567890';
const RECEIVER = '6289876543210';

interface Answer {
  status: number;
  ms: number;
}

/** Posts `body` and resolves with the status (0: connection closed) and the time to the answer. */
function post(base: string, body: Buffer): Promise<Answer> {
  return new Promise((resolve) => {
    const started = performance.now();
    let settled = false;
    const req = request(
      `${base}/messages`,
      {
        method: 'POST',
        headers: {
          authorization: `Bearer ${TOKEN}`,
          'content-type': 'application/json',
          'content-length': body.length,
        },
      },
      (res) => {
        res.resume();
        res.on('end', () => {
          if (settled) return;
          settled = true;
          resolve({ status: res.statusCode ?? 0, ms: performance.now() - started });
        });
      },
    );
    // Over the body limit the gateway answers 413 and closes the connection while the client is
    // still writing: the client may see the reset (EPIPE) before it reads the answer. Counted as
    // status 0, "closed", with its time.
    req.on('error', () => {
      if (settled) return;
      settled = true;
      resolve({ status: 0, ms: performance.now() - started });
    });
    req.end(body);
  });
}

/** One /healthz request on a new connection (no keep-alive reuse racing the server's idle timeout). */
function healthz(base: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(`${base}/healthz`, { agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end();
  });
}

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
};

async function runCase(base: string, name: string, body: Buffer) {
  let running = true;
  const health: number[] = [];
  let probeErrors = 0;
  const probe = (async () => {
    while (running) {
      const started = performance.now();
      try {
        if ((await healthz(base)) !== 200) probeErrors++;
        health.push(performance.now() - started);
      } catch {
        probeErrors++;
      }
    }
  })();
  const answers: Answer[] = [];
  const statuses = new Set<number>();
  for (let round = 0; round < rounds; round++) {
    const batch = await Promise.all(Array.from({ length: parallel }, () => post(base, body)));
    for (const answer of batch) {
      answers.push(answer);
      statuses.add(answer.status);
    }
  }
  running = false;
  await probe;
  const ms = answers.map((a) => a.ms);
  const fmt = (n: number) => n.toFixed(1);
  console.log(
    `${name.padEnd(28)} ${(body.length / 1e6).toFixed(2).padStart(6)} MB  status ${[...statuses].join(',')}  ` +
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
