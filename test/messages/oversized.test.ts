// Issue 10 item 1: an oversized text is refused in time proportional to the limit, not to the
// text, so it never holds up other requests. Against the gateway as its own process (so that the
// test's own work of sending megabytes does not count against it): while bodies of about 1 MB (a
// chat text, an emoji text, a caption, each far over its limit) are being refused, three at a
// time, /healthz keeps answering about as fast as it does with nothing refused.
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newStoreLocation, noStoreAvailable, TEST_TOKEN, type StoreLocation } from '../helpers/gateway.js';
import { BUILD_TIMEOUT_MS, ensureBuilt } from '../helpers/built.js';
import { startGatewayProcess, type GatewayProcess } from '../helpers/gateway-process.js';

const DEVICE = '6281234567890';
const RECEIVER = '6289876543210';
const NEAR_LIMIT = 1_000_000; // characters: the body stays under the 1 MB body limit

function post(base: string, body: Buffer): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      `${base}/messages`,
      {
        method: 'POST',
        headers: {
          authorization: `Bearer ${TEST_TOKEN}`,
          'content-type': 'application/json',
          'content-length': body.length,
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString()) }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

describe.skipIf(noStoreAvailable)('oversized texts', () => {
  beforeAll(() => ensureBuilt(), BUILD_TIMEOUT_MS);
  let location: StoreLocation;
  let gateway: GatewayProcess;
  let base: string;
  beforeAll(async () => {
    location = await newStoreLocation();
    gateway = await startGatewayProcess(location);
    base = `http://127.0.0.1:${gateway.port}`;
  }, 60_000);
  afterAll(async () => {
    await gateway?.stop();
    await location?.drop();
  });

  const json = (value: unknown) => Buffer.from(JSON.stringify(value));
  const bodies = {
    chat: () => json({ device: DEVICE, receiver: RECEIVER, type: 'chat', message: 'a'.repeat(NEAR_LIMIT) }),
    emoji: () =>
      json({
        device: DEVICE,
        receiver: RECEIVER,
        type: 'chat',
        params: { text: '👍🏽'.repeat(NEAR_LIMIT / 16) },
      }),
    caption: () =>
      json({
        device: DEVICE,
        receiver: RECEIVER,
        type: 'image',
        params: { image: { url: 'https://example.com/a.png' }, caption: 'b'.repeat(NEAR_LIMIT) },
      }),
  };

  it('refuses each as Message too long', async () => {
    for (const make of Object.values(bodies)) {
      const res = await post(base, make());
      expect(res.status).toBe(400);
      expect(res.body.message).toBe('Message too long');
    }
  });

  it('keeps /healthz answering while they are refused about as fast as without them', async () => {
    const payloads = [bodies.chat(), bodies.emoji(), bodies.caption()];
    const healthz = async () => {
      const started = performance.now();
      const res = await fetch(`${base}/healthz`);
      await res.text();
      expect(res.status).toBe(200);
      return performance.now() - started;
    };
    // The same host, the same moment, nothing refused: what /healthz takes here and now.
    const quiet: number[] = [];
    for (let i = 0; i < 40; i++) quiet.push(await healthz());
    const latencies: number[] = [];
    let refusing = true;
    const refusals = (async () => {
      try {
        // At least 3 rounds, and on until /healthz has been asked 40 times while refusals ran.
        const deadline = Date.now() + 60_000;
        for (let round = 0; (round < 3 || latencies.length < 40) && Date.now() < deadline; round++) {
          const answers = await Promise.all(payloads.map((payload) => post(base, payload)));
          for (const answer of answers) expect(answer.status).toBe(400);
        }
      } finally {
        refusing = false;
      }
    })();
    while (refusing) latencies.push(await healthz());
    await refusals;
    expect(latencies.length).toBeGreaterThanOrEqual(40);
    // The median against the quiet run's 90th percentile, measured just before on the same host: a loaded machine
    // (this suite runs four files at a time on 2 cores) slows both alike, and a fixed bound of 200 ms failed there.
    // Before the fix every answer given during a refusal waited for it (seconds), so the median was seconds too,
    // many times any quiet figure; 200 ms stays the floor of the bound, so a quiet host is held to it.
    const at = (values: number[], q: number) => [...values].sort((a, b) => a - b)[Math.floor(values.length * q)]!;
    expect(at(latencies, 0.5)).toBeLessThan(Math.max(200, 3 * at(quiet, 0.9)));
  });
});
