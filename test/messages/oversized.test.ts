// Issue 10 item 1: an oversized text is refused in time proportional to the limit, not to the
// text, so it never holds up other requests. Against the gateway as its own process (so that the
// test's own work of sending megabytes does not count against it): while bodies of about 1 MB (a
// chat text, an emoji text, a caption, each far over its limit) are being refused, three at a
// time, /healthz keeps answering within 200 ms.
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newStoreLocation, noStoreAvailable, TEST_TOKEN, type StoreLocation } from '../helpers/gateway.js';
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

  it('keeps /healthz answering within 200 ms while they are refused', async () => {
    const payloads = [bodies.chat(), bodies.emoji(), bodies.caption()];
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
    while (refusing) {
      const started = performance.now();
      const res = await fetch(`${base}/healthz`);
      await res.text();
      latencies.push(performance.now() - started);
      expect(res.status).toBe(200);
    }
    await refusals;
    expect(latencies.length).toBeGreaterThanOrEqual(40);
    // The median, not the maximum: on the shared 2-core host this suite runs on, an idle gateway's
    // /healthz itself had a worst case of 339 ms in 1,600 requests, and under a loaded run of the
    // suite even its 90th percentile can pass 200 ms (scheduling, not the gateway). Before the fix
    // every answer given during a refusal waited for it (seconds), so the median was seconds too.
    const sorted = [...latencies].sort((a, b) => a - b);
    expect(sorted[Math.floor(sorted.length / 2)]).toBeLessThan(200);
  });
});
