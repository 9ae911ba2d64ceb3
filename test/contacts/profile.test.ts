// DECISIONS 16 (docs/api.md, Profile): GET and PUT /devices/{id}/profile through the sandbox: name, about text and
// a picture fetched through the guarded fetcher (JPEG or PNG only), every error at its boundary.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { noStoreAvailable, startGateway, type TestGateway } from '../helpers/gateway.js';
import { createPairedDevice } from '../helpers/pairing.js';

const JPEG = Buffer.from('ffd8ffe000104a46494600010100000100010000', 'hex');
const WEBP = Buffer.concat([Buffer.from('RIFF'), Buffer.alloc(4), Buffer.from('WEBPVP8 ')]);
const LIMIT = 16 * 1024 * 1024;

describe.skipIf(noStoreAvailable)('own profile', () => {
  let gw: TestGateway;
  let deviceId: number;
  let server: Server;
  let base: string;
  beforeAll(async () => {
    server = createServer((req, res) => {
      if (req.url === '/me.jpg') res.writeHead(200, { 'content-type': 'image/jpeg' }).end(JPEG);
      else if (req.url === '/me.webp') res.writeHead(200, { 'content-type': 'image/jpeg' }).end(WEBP);
      else if (req.url === '/limit.jpg')
        res.writeHead(200).end(Buffer.concat([JPEG, Buffer.alloc(LIMIT - JPEG.length)]));
      else if (req.url === '/over.jpg')
        res.writeHead(200).end(Buffer.concat([JPEG, Buffer.alloc(LIMIT + 1 - JPEG.length)]));
      else res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    gw = await startGateway({ config: { allowPrivateUrls: true } });
    deviceId = (await createPairedDevice(gw, '6283899000001')).id;
  });
  afterAll(async () => {
    await gw?.close();
    await new Promise((resolve) => server?.close(resolve));
  });

  const put = (body: unknown, id = deviceId) => gw.request('PUT', `/devices/${id}/profile`, body);

  it('reads the profile, changes name and about, and reads the change back', async () => {
    const empty = await gw.request('GET', `/devices/${deviceId}/profile`);
    expect(empty.body).toEqual({
      code: 200,
      status: 200,
      message: 'Profile retrieved',
      data: { name: null, about: null, picture_url: null },
    });
    const changed = await put({ name: 'Acme Support', about: 'We answer 9-17' });
    expect(changed.body).toEqual({
      code: 200,
      status: 200,
      message: 'Profile updated',
      data: { name: 'Acme Support', about: 'We answer 9-17', picture_url: null },
    });
    expect((await gw.request('GET', `/devices/${deviceId}/profile`)).body.data).toEqual(changed.body.data);
    // A name of exactly 25 characters and an about text of exactly 139 are taken; an empty about clears it.
    expect((await put({ name: 'n'.repeat(25), about: 'a'.repeat(139) })).status).toBe(200);
    expect((await put({ about: '' })).body.data.about).toBe('');
  });

  it('sets the picture from a JPEG URL (up to 16 MB), the network showing its own address for it', async () => {
    const res = await put({ picture_url: `${base}/me.jpg` });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data.picture_url).toMatch(/^https:\/\/sandbox\.invalid\/pictures\/[0-9a-f]{32}\.jpg$/);
    expect((await put({ picture_url: `${base}/limit.jpg` })).status).toBe(200);
  });

  it.each([
    [{}, 'Validation failed', 'name'],
    [{ name: '' }, 'Validation failed', 'name'],
    [{ name: 'n'.repeat(26) }, 'Validation failed', 'name'],
    [{ name: 7 }, 'Validation failed', 'name'],
    [{ about: 'a'.repeat(140) }, 'Validation failed', 'about'],
    [{ picture_url: 5 }, 'Validation failed', 'picture_url'],
  ])('refuses %j with 400 %s naming %s', async (body, message, field) => {
    const res = await put(body);
    expect(res.status).toBe(400);
    expect(res.body.message).toBe(message);
    expect(Object.keys(res.body.errors)).toEqual([field]);
  });

  it('refuses pictures that cannot be fetched or are not JPEG or PNG, changing nothing', async () => {
    const before = (await gw.request('GET', `/devices/${deviceId}/profile`)).body.data;
    for (const [url, message, error] of [
      ['ftp://example.com/me.jpg', 'Invalid image URL', undefined],
      [`${base}/missing.jpg`, 'Unable to download image', undefined],
      [`${base}/me.webp`, 'Unsupported file format', 'the picture must be a JPEG or PNG image'],
      [`${base}/over.jpg`, 'File too large', 'the picture is larger than 16 MB'],
    ] as const) {
      const res = await put({ name: 'Should not stick', picture_url: url });
      expect(res.status, url).toBe(400);
      expect(res.body.message, url).toBe(message);
      if (error !== undefined) expect(res.body.error).toBe(error);
    }
    expect((await gw.request('GET', `/devices/${deviceId}/profile`)).body.data).toEqual(before);
  });

  it('answers 404 Device not found for an unknown or another account’s device, 400 when not connected', async () => {
    expect((await gw.request('GET', '/devices/999999/profile')).body.message).toBe('Device not found');
    expect((await gw.request('GET', '/devices/abc/profile')).status).toBe(404);
    const other = await gw.app.services.accounts.createAccount('profile-other');
    const token = (await gw.app.services.accounts.createToken(other.id, 't')).token;
    expect((await gw.request('GET', `/devices/${deviceId}/profile`, undefined, token)).status).toBe(404);
    expect((await gw.request('PUT', `/devices/${deviceId}/profile`, { name: 'x' }, token)).status).toBe(404);
    const idle = await gw.request('POST', '/devices', { package: 'BETA', name: 'idle', phone: '6283899000002' });
    const res = await gw.request('GET', `/devices/${idle.body.data.id}/profile`);
    expect(res.status).toBe(400);
    expect(res.body.message).toBe('Device not connected');
  });
});
