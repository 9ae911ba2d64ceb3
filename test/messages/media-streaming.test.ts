// Issue 10, item 18, and docs/internals.md, Retention: media is streamed into the store in
// chunks as it is downloaded (never held whole), only a few downloads run at
// once, nothing is kept for a request that becomes no message, and the bytes
// are deleted once the message is sent or failed. What reaches the phone is
// exactly what was served.
import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FETCH_SLOTS } from '../../src/messages/media-intake.js';
import { noStoreAvailable, startGateway, type TestGateway } from '../helpers/gateway.js';
import { createPairedDevice } from '../helpers/pairing.js';
import { waitFor } from '../helpers/wait.js';

const MiB = 1024 * 1024;
// A PDF header, then 5.5 MiB of varied bytes: six chunks, the last one partial.
const pdf = Buffer.alloc(5.5 * MiB);
pdf.write('%PDF-1.7\n', 0, 'latin1');
for (let i = 9; i < pdf.length; i++) pdf[i] = (i * 31 + (i >> 12)) & 0xff;

describe.skipIf(noStoreAvailable)('media streamed into the store', () => {
  let server: Server;
  let base: string;
  let gw: TestGateway;
  let device: string;
  let concurrent = 0;
  let peak = 0;
  let hold: Promise<void> = Promise.resolve();

  beforeAll(async () => {
    server = createServer((req, res) => {
      concurrent++;
      peak = Math.max(peak, concurrent);
      res.on('close', () => concurrent--);
      if (req.url === '/doc.pdf') return res.writeHead(200, { 'content-type': 'application/pdf' }).end(pdf);
      if (req.url === '/slow.pdf') {
        res.writeHead(200, { 'content-type': 'application/pdf' });
        res.write(pdf.subarray(0, 1024));
        void hold.then(() => res.end(pdf.subarray(1024, 4096)));
        return;
      }
      if (req.url === '/not-media') return res.writeHead(200).end(Buffer.alloc(2 * MiB, 0x20));
      res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    gw = await startGateway({
      config: { sendIntervalMs: 0, allowPrivateUrls: true },
      // A refused first attempt is retried after 3 s: long enough to look at the stored media before it goes.
      build: { sandbox: { deliveryDelayMs: 1 }, dispatch: { retryBaseMs: 3000 } },
    });
    device = (await createPairedDevice(gw, '6281710000001')).phone;
  });
  afterAll(async () => {
    await gw?.close();
    await new Promise((resolve) => server?.close(resolve));
  });

  const sendFile = (url: string, receiver = '6281719990001') =>
    gw.request('POST', '/messages', {
      device,
      receiver,
      type: 'file',
      params: { document: { url }, fileName: 'doc.pdf' },
    });
  const chunks = async () =>
    gw.app.store.db.selectFrom('media_chunks').select(['media_id', 'seq', 'bytes']).orderBy('seq').execute();

  it('stores a file in chunks of at most 1 MiB, sends exactly its bytes, then deletes them', async () => {
    // A number ending 0004 is rate limited by the network: the first attempt is refused, so the message waits for
    // its retry with its media in the store, where we look at it.
    const res = await sendFile(`${base}/doc.pdf`, '6281719990004');
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const id = res.body.data.id as string;
    const stored = await chunks();
    expect(stored.map((row) => [row.seq, row.bytes.length])).toEqual([
      [0, MiB],
      [1, MiB],
      [2, MiB],
      [3, MiB],
      [4, MiB],
      [5, MiB / 2],
    ]);
    expect(Buffer.concat(stored.map((row) => Buffer.from(row.bytes))).equals(pdf)).toBe(true);
    const [media] = await gw.app.store.db
      .selectFrom('message_media')
      .select(['message_id', 'media_id', 'bytes'])
      .execute();
    expect(media).toMatchObject({ message_id: id, media_id: stored[0]!.media_id });
    expect(media!.bytes.length).toBe(0);
    const inbox = await waitFor(
      async () => ((await gw.request('GET', '/sandbox/phones/6281719990004')).body.data?.inbox ?? []) as any[],
      (entries) => entries.some((e) => e.message_id === id),
      { what: 'the file at the phone', timeoutMs: 15_000 },
    );
    const entry = inbox.find((e) => e.message_id === id);
    expect(entry.content).toMatchObject({
      mimetype: 'application/pdf',
      size: pdf.length,
      sha256: createHash('sha256').update(pdf).digest('hex'),
    });
    // Sent: the bytes are gone (docs/internals.md, Retention).
    await waitFor(
      async () => (await gw.request('GET', `/messages/${id}`)).body.data.status,
      (status) => status === 'sent' || status === 'delivered',
      { what: 'sent' },
    );
    await waitFor(chunks, (rows) => rows.length === 0, { what: 'media deleted after sending' });
    expect(await gw.app.store.db.selectFrom('message_media').select('message_id').execute()).toEqual([]);
  });

  it('deletes the bytes of a message that fails', async () => {
    // An unregistered number (ending 0000): the network refuses the message for good.
    const res = await sendFile(`${base}/doc.pdf`, '6281719990000');
    expect(res.status).toBe(200);
    const id = res.body.data.id as string;
    await waitFor(
      async () => (await gw.request('GET', `/messages/${id}`)).body.data.status,
      (status) => status === 'failed',
      { what: 'failed at the network' },
    );
    // Failed: the bytes are gone too.
    await waitFor(chunks, (rows) => rows.length === 0, { what: 'media deleted after failing' });
  });

  it('keeps nothing for a download refused for its format or for a request refused after it', async () => {
    const refused = await gw.request('POST', '/messages', {
      device,
      receiver: '6281719990001',
      type: 'image',
      params: { image: { url: `${base}/not-media` } },
    });
    expect(refused.status).toBe(400);
    expect(refused.body.message).toBe('Unsupported file format');
    const quotaDevice = await createPairedDevice(gw, '6281710000002', { package: 'BETA' });
    await gw.app.store.db.updateTable('devices').set({ quote_used: 250 }).where('id', '=', quotaDevice.id).execute();
    const quota = await gw.request('POST', '/messages', {
      device: quotaDevice.phone,
      receiver: '6281719990001',
      type: 'file',
      params: { document: { url: `${base}/doc.pdf` }, fileName: 'doc.pdf' },
    });
    expect(quota.body).toMatchObject({ code: 403, status: 403, message: 'Quota exceeded' });
    await waitFor(chunks, (rows) => rows.length === 0, { what: 'no chunks left behind' });
  });

  it(`runs at most ${FETCH_SLOTS} downloads at once; the others wait their turn and are accepted`, async () => {
    let release!: () => void;
    hold = new Promise<void>((resolve) => (release = resolve));
    peak = 0;
    const sends = Array.from({ length: FETCH_SLOTS + 3 }, () => sendFile(`${base}/slow.pdf`));
    await waitFor(
      () => concurrent,
      (n) => n === FETCH_SLOTS,
      { what: 'the download slots full' },
    );
    // Give the waiting ones every chance to start too early.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(concurrent).toBe(FETCH_SLOTS);
    release();
    const answers = await Promise.all(sends);
    for (const answer of answers) expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(peak).toBe(FETCH_SLOTS);
  });
});
