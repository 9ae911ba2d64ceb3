// DECISIONS 15 and issue 26: incoming media is streamed in chunks, so memory stays flat whatever its size. A 60 MB
// video from a real media server (its bytes made as they are sent, so the server holds none of them) is downloaded
// into the store and served back at its signed URL, read as it arrives (hashed, never kept); the process's resident
// memory, sampled all along, grows by less than 30 MB over what it was before.
import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { noStoreAvailable, startGateway, type TestGateway } from '../helpers/gateway.js';
import { waitFor } from '../helpers/wait.js';
import { pairedWithWebhook, quickWebhooks, startReceiver, waitForEvent, type Receiver } from '../events/helpers.js';

const PHONE = '6287700000092';
const FRIEND = '6287799990092';
const SIZE = 60 * 1024 * 1024;
const PIECE = 64 * 1024;

/** Piece `n` of the file: the same bytes each time, made on demand. */
function piece(n: number): Buffer {
  const out = Buffer.alloc(PIECE);
  for (let i = 0; i < PIECE; i += 32) createHash('sha256').update(`${n}:${i}`).digest().copy(out, i);
  return out;
}

describe.skipIf(noStoreAvailable)('a 60 MB incoming video', () => {
  let gw: TestGateway;
  let hooks: Receiver;
  let files: Server;
  let url: string;
  beforeAll(async () => {
    files = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': SIZE });
      let n = 0;
      const more = () => {
        while (n * PIECE < SIZE) {
          if (!res.write(piece(n++))) return void res.once('drain', more);
        }
        res.end();
      };
      more();
    });
    await new Promise<void>((resolve) => files.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(files.address() as AddressInfo).port}/big.mp4`;
    hooks = await startReceiver();
    gw = await startGateway({
      config: { allowPrivateUrls: true, sendIntervalMs: 0 },
      build: { sandbox: { deliveryDelayMs: 5, readDelayMs: 5 }, webhooks: quickWebhooks },
    });
    await gw.app.listen({ port: 0, host: '127.0.0.1' });
    await pairedWithWebhook(gw, PHONE, hooks.url);
  });
  afterAll(async () => {
    await gw?.close();
    await hooks?.close();
    await new Promise((resolve) => files?.close(resolve));
  });

  it('is stored and served with resident memory growing by less than 30 MB', { timeout: 180_000 }, async () => {
    const expected = createHash('sha256');
    for (let n = 0; n * PIECE < SIZE; n++) expected.update(piece(n));
    const sha256 = expected.digest('hex');

    global.gc?.();
    const before = process.memoryUsage().rss;
    let peak = before;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
    try {
      const sent = await gw.request('POST', `/sandbox/phones/${FRIEND}/messages`, {
        to: PHONE,
        type: 'video',
        media: { url },
      });
      expect(sent.status).toBe(200);
      const event = JSON.parse((await waitForEvent(hooks, 'message.incoming')).body).data;
      const message = await waitFor(
        async () => (await gw.request('GET', `/messages/${event.id}`)).body.data,
        (m) => m.media?.status !== 'pending',
        { what: 'the download over', timeoutMs: 120_000, intervalMs: 200 },
      );
      expect(message.media).toMatchObject({ status: 'stored', size: SIZE, sha256 });

      const served = await fetch(event.file_url, { headers: { connection: 'close' } });
      expect(served.status).toBe(200);
      expect(served.headers.get('content-length')).toBe(String(SIZE));
      const hash = createHash('sha256');
      let length = 0;
      for await (const chunk of served.body as unknown as AsyncIterable<Uint8Array>) {
        hash.update(chunk);
        length += chunk.byteLength;
      }
      expect(length).toBe(SIZE);
      expect(hash.digest('hex')).toBe(sha256);
    } finally {
      clearInterval(sampler);
    }
    const growthMb = (peak - before) / (1024 * 1024);
    console.log(
      `60 MB incoming video: RSS before ${(before / 2 ** 20).toFixed(1)} MB, peak ${(peak / 2 ** 20).toFixed(1)} MB, growth ${growthMb.toFixed(1)} MB`,
    );
    expect(growthMb).toBeLessThan(30);
  });
});
