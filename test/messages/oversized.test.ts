// Issue 10 item 1: an oversized text is refused in time proportional to the limit, not to the
// text, so it never holds up other requests. Against a real listening server: while several
// bodies of about 1 MB (each a chat text, a caption or a list text far over its limit) are being
// refused, /healthz keeps answering within 200 ms.
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { noStoreAvailable, startGateway, TEST_TOKEN, type TestGateway } from '../helpers/gateway.js';

const DEVICE = '6281234567890';
const RECEIVER = '6289876543210';
const NEAR_LIMIT = 1_000_000; // characters: the body stays under the 1 MB body limit

function post(base: string, body: string): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      `${base}/messages`,
      {
        method: 'POST',
        headers: {
          authorization: `Bearer ${TEST_TOKEN}`,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
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
  let gw: TestGateway;
  let base: string;
  beforeAll(async () => {
    gw = await startGateway();
    base = await gw.app.listen({ host: '127.0.0.1', port: 0 });
  });
  afterAll(() => gw?.close());

  const bodies = {
    chat: () => JSON.stringify({ device: DEVICE, receiver: RECEIVER, type: 'chat', message: 'a'.repeat(NEAR_LIMIT) }),
    emoji: () =>
      JSON.stringify({
        device: DEVICE,
        receiver: RECEIVER,
        type: 'chat',
        params: { text: '👍🏽'.repeat(NEAR_LIMIT / 16) },
      }),
    caption: () =>
      JSON.stringify({
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
    const payloads = [bodies.chat(), bodies.emoji(), bodies.caption(), bodies.chat(), bodies.chat()];
    let refusing = true;
    const refusals = (async () => {
      try {
        for (let round = 0; round < 4; round++) {
          const answers = await Promise.all(payloads.map((payload) => post(base, payload)));
          for (const answer of answers) expect(answer.status).toBe(400);
        }
      } finally {
        refusing = false;
      }
    })();
    const latencies: number[] = [];
    while (refusing) {
      const started = performance.now();
      const res = await fetch(`${base}/healthz`);
      await res.text();
      latencies.push(performance.now() - started);
      expect(res.status).toBe(200);
    }
    await refusals;
    expect(latencies.length).toBeGreaterThan(0);
    expect(Math.max(...latencies)).toBeLessThan(200);
  });
});
