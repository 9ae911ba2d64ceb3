// Issue 10, items 8 and 20, end to end on both stores: PATCH /devices/{id}
// refuses a webhook URL that can never be delivered (a non-public literal, or
// a name resolving to non-public addresses) and names the settings that allow
// it; GATEWAY_ALLOWED_PRIVATE_HOSTS lets exactly the listed names and CIDRs
// through for webhooks and media, while the rest of private space stays refused.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { noStoreAvailable, startGateway, type TestGateway } from '../helpers/gateway.js';
import { createPairedDevice } from '../helpers/pairing.js';
import { pairedWithWebhook, startReceiver, waitForEvent, type Receiver } from '../events/helpers.js';
import { fakeLookup, fixture } from './helpers.js';

const names = fakeLookup({
  'hooks.lan': '127.0.0.1',
  'media.lan': '127.0.0.1',
  'other.lan': '127.0.0.1',
  'lan.box': ['10.20.0.5', '10.20.0.6'],
  'mixed.test': ['93.184.216.34', '192.168.0.9'],
  'public.test': '93.184.216.34',
});

describe.skipIf(noStoreAvailable)('webhook URL check on PATCH /devices/{id}', () => {
  let gw: TestGateway;
  let id: number;
  beforeAll(async () => {
    gw = await startGateway({ config: { allowPrivateUrls: false }, build: { outboundLookup: names } });
    id = (await gw.request('POST', '/devices', { package: 'BUSINESS', name: 'checked' })).body.data.id;
  });
  afterAll(async () => {
    await gw?.close();
  });

  it.each([
    ['a loopback literal', 'http://127.0.0.1:9000/hooks', 'is'],
    ['a private IPv6 literal', 'http://[fd00::5]/hooks', 'is'],
    ['a link-local literal', 'http://169.254.169.254/latest', 'is'],
    ['an IPv4-mapped literal', 'https://[::ffff:10.0.0.1]/hooks', 'is'],
    ['a name resolving only to private addresses', 'http://lan.box:8080/hooks', 'resolves to'],
    ['a name resolving partly to a private address', 'http://mixed.test/hooks', 'resolves to'],
  ])('refuses %s with 400 Validation failed naming the reason and the settings', async (_what, url, verb) => {
    const res = await gw.request('PATCH', `/devices/${id}`, { webhook_url: url });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 400, status: 400, message: 'Validation failed' });
    expect(Object.keys(res.body.errors)).toEqual(['webhook_url']);
    const [reason] = res.body.errors.webhook_url;
    expect(reason).toMatch(new RegExp(`^the host ${verb} an address that is not public`));
    expect(reason).toContain('GATEWAY_ALLOWED_PRIVATE_HOSTS');
    expect(reason).toContain('GATEWAY_ALLOW_PRIVATE_URLS');
    // Never where the name points: that would map the internal network for the caller.
    expect(reason).not.toMatch(/10\.20\.0|192\.168/);
    expect((await gw.request('GET', `/devices/${id}`)).body.data.webhook_url).toBeNull();
  });

  it('accepts a public address, a name that resolves publicly, and a name it cannot resolve now', async () => {
    for (const url of ['http://93.184.216.34/hooks', 'https://public.test/hooks', 'https://not-yet.test/hooks']) {
      const res = await gw.request('PATCH', `/devices/${id}`, { webhook_url: url });
      expect(res.status, url).toBe(200);
      expect(res.body.data.webhook_url).toBe(url);
    }
    expect((await gw.request('PATCH', `/devices/${id}`, { webhook_url: null })).status).toBe(200);
  });
});

describe.skipIf(noStoreAvailable)('GATEWAY_ALLOWED_PRIVATE_HOSTS', () => {
  let gw: TestGateway;
  let hooks: Receiver;
  let media: Server;
  let mediaPort: number;
  let phone: string;
  beforeAll(async () => {
    hooks = await startReceiver();
    media = createServer((req, res) => {
      if (req.url === '/a.png') return res.writeHead(200, { 'content-type': 'image/png' }).end(fixture('tiny.png'));
      if (req.url?.startsWith('/redirect')) {
        const to = new URL(req.url, 'http://x').searchParams.get('to') ?? '/';
        return res.writeHead(302, { location: to }).end();
      }
      res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => media.listen(0, '127.0.0.1', resolve));
    mediaPort = (media.address() as AddressInfo).port;
    gw = await startGateway({
      config: {
        allowPrivateUrls: false,
        allowedPrivateHosts: ['hooks.lan', 'media.lan', '10.20.0.0/24'],
        sendIntervalMs: 0,
      },
      build: { outboundLookup: names, webhooks: { retryScheduleMs: [50], pollIntervalMs: 50 } },
    });
    phone = (await createPairedDevice(gw, '6287510000001')).phone;
  });
  afterAll(async () => {
    await gw?.close();
    await hooks?.close();
    await new Promise((resolve) => media?.close(resolve));
  });

  it('accepts an allowed name and an address inside an allowed CIDR on PATCH, refuses the neighbour outside it', async () => {
    const id = (await gw.request('POST', '/devices', { package: 'BUSINESS', name: 'lan' })).body.data.id;
    for (const url of ['http://hooks.lan:1/h', 'http://10.20.0.255/h', 'http://lan.box/h']) {
      expect((await gw.request('PATCH', `/devices/${id}`, { webhook_url: url })).status, url).toBe(200);
    }
    for (const url of ['http://10.20.1.0/h', 'http://10.19.255.255/h', 'http://other.lan/h', 'http://127.0.0.1/h']) {
      const res = await gw.request('PATCH', `/devices/${id}`, { webhook_url: url });
      expect(res.status, url).toBe(400);
      expect(res.body.errors.webhook_url[0]).toContain('not public');
    }
  });

  it('delivers webhooks to an allowed name', async () => {
    const device = await pairedWithWebhook(gw, '6287510000002', `http://hooks.lan:${hooks.port}/hooks`);
    const paired = await waitForEvent(hooks, 'device.paired', (event) => event.device.id === device.id);
    expect(JSON.parse(paired.body).device.phone).toBe('6287510000002');
  });

  it('fetches media from an allowed name, and refuses a redirect from it to a private host not allowed', async () => {
    const send = (url: string) =>
      gw.request('POST', '/messages', {
        device: phone,
        receiver: '6287519999999',
        type: 'image',
        params: { image: { url } },
      });
    const ok = await send(`http://media.lan:${mediaPort}/a.png`);
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    for (const target of [`http://127.0.0.1:${mediaPort}/a.png`, `http://other.lan:${mediaPort}/a.png`]) {
      const res = await send(`http://media.lan:${mediaPort}/redirect?to=${encodeURIComponent(target)}`);
      expect(res.status, target).toBe(400);
      expect(res.body).toMatchObject({ code: 400, status: 400, message: 'Invalid image URL' });
      expect(res.body.error).toMatch(/^redirect target address is not allowed; GATEWAY_ALLOWED_PRIVATE_HOSTS/);
    }
    const direct = await send(`http://other.lan:${mediaPort}/a.png`);
    expect(direct.status).toBe(400);
    expect(direct.body.error).toMatch(/^destination address is not allowed/);
  });
});
