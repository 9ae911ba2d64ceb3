// Spec 4.5 rule 3, 7.2; docs/internals.md, Sending: media is fetched at acceptance from a real
// local HTTP server; what was checked is what reaches the phone.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { noStoreAvailable, startGateway, type TestGateway } from '../helpers/gateway.js';
import { createPairedDevice } from '../helpers/pairing.js';
import { waitFor } from '../helpers/wait.js';

const fixture = (name: string) => readFileSync(new URL(`../fixtures/media/${name}`, import.meta.url));
const LIMIT = 16 * 1024 * 1024;

describe.skipIf(noStoreAvailable)('media messages', () => {
  let server: Server;
  let base: string;
  let gw: TestGateway;
  let strict: TestGateway;
  let device: string;

  beforeAll(async () => {
    const png = fixture('tiny.png');
    server = createServer((req, res) => {
      const url = req.url ?? '/';
      const serve = (body: Buffer, type: string) => res.writeHead(200, { 'content-type': type }).end(body);
      if (url === '/a.jpg') return serve(fixture('tiny.jpg'), 'image/jpeg');
      if (url === '/a.png') return serve(png, 'image/png');
      if (url === '/a.gif') return serve(fixture('tiny.gif'), 'image/gif');
      if (url === '/a.webp') return serve(fixture('tiny.webp'), 'image/webp');
      if (url === '/fake.png') return serve(Buffer.from('this is not an image at all'), 'image/png');
      if (url === '/exact.png') return serve(Buffer.concat([png, Buffer.alloc(LIMIT - png.length)]), 'image/png');
      if (url === '/over.png') return serve(Buffer.concat([png, Buffer.alloc(LIMIT + 1 - png.length)]), 'image/png');
      if (url === '/redirect') return res.writeHead(302, { location: '/a.png' }).end();
      res.writeHead(404).end('missing');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    gw = await startGateway({
      config: { sendIntervalMs: 0, allowPrivateUrls: true },
      build: { sandbox: { deliveryDelayMs: 1 } },
    });
    device = (await createPairedDevice(gw, '6281700000001')).phone;
    strict = await startGateway({ config: { sendIntervalMs: 0, allowPrivateUrls: false } });
    await createPairedDevice(strict, '6281700000001');
  });
  afterAll(async () => {
    await gw?.close();
    await strict?.close();
    await new Promise((resolve) => server?.close(resolve));
  });

  const sendImage = (target: TestGateway, url: string, extra: Record<string, unknown> = {}) =>
    target.request('POST', '/messages', {
      device,
      receiver: '6281799990010',
      type: 'image',
      params: { image: { url }, ...extra },
    });

  it.each([
    ['a.jpg', 'image/jpeg'],
    ['a.png', 'image/png'],
    ['a.gif', 'image/gif'],
    ['a.webp', 'image/webp'],
  ])('sends a real %s and the phone receives exactly those bytes', async (name, mimetype) => {
    const res = await sendImage(gw, `${base}/${name}`, { caption: 'look' });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.message).toBe('Image sent successfully');
    expect(res.body.data).toMatchObject({ type: 'image', file_url: `${base}/${name}`, message: 'look' });
    const inbox = await waitFor(
      async () => ((await gw.request('GET', '/sandbox/phones/6281799990010')).body.data?.inbox ?? []) as any[],
      (entries) => entries.some((e) => e.message_id === res.body.data.id),
      { what: 'image in the inbox' },
    );
    const entry = inbox.find((e) => e.message_id === res.body.data.id);
    const sha = createHash('sha256')
      .update(fixture(name.replace('a.', 'tiny.')))
      .digest('hex');
    expect(entry.content).toMatchObject({ mimetype, sha256: sha, caption: 'look' });
  });

  it('follows a redirect', async () => {
    expect((await sendImage(gw, `${base}/redirect`)).status).toBe(200);
  });

  it('takes exactly 16 MB and refuses 16 MB + 1 byte with 400 File too large', async () => {
    expect((await sendImage(gw, `${base}/exact.png`)).status).toBe(200);
    const over = await sendImage(gw, `${base}/over.png`);
    expect(over.status).toBe(400);
    expect(over.body.message).toBe('File too large');
  });

  it.each([
    ['/fake.png', 'Unsupported file format'],
    ['/missing.png', 'Unable to download image'],
  ])('answers %s with %s', async (path, message) => {
    const res = await sendImage(gw, `${base}${path}`);
    expect(res.status).toBe(400);
    expect(res.body.message).toBe(message);
  });

  it('answers 400 Invalid image URL for a URL that is not absolute http(s)', async () => {
    for (const url of ['ftp://127.0.0.1/a.png', '/a.png', 'not a url']) {
      const res = await sendImage(gw, url);
      expect(res.status, url).toBe(400);
      expect(res.body.message, url).toBe('Invalid image URL');
    }
  });

  it('refuses a private address with 400 Invalid image URL unless private URLs are allowed', async () => {
    const res = await sendImage(strict, `${base}/a.png`);
    expect(res.status).toBe(400);
    expect(res.body.message).toBe('Invalid image URL');
  });

  it('answers 400 Unable to download image when nothing listens', async () => {
    const res = await sendImage(gw, 'http://127.0.0.1:9/a.png');
    expect(res.status).toBe(400);
    expect(res.body.message).toBe('Unable to download image');
  });
});
