// Issue 22, item 5, end to end on both stores: every spelling of a loopback or private host that
// the WHATWG URL parser lets through (trailing dots, upper case, IPv4 shorthand and other radixes,
// IPv4-mapped IPv6, names under .localhost) is refused as a webhook URL and as a media URL while
// private URLs are not allowed, and accepted when GATEWAY_ALLOW_PRIVATE_URLS or a matching
// GATEWAY_ALLOWED_PRIVATE_HOSTS entry allows it. The gateway resolves names with the system
// resolver here (no fake lookup), as it does in production: `localhost.` does not resolve on every
// machine, and a name the check cannot resolve used to be let through.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { noStoreAvailable, startGateway, type TestGateway } from '../helpers/gateway.js';
import { createPairedDevice } from '../helpers/pairing.js';
import { fixture, startServer, type TestServer } from './helpers.js';

// Each entry: the host as written in the URL (port added by the test).
const LOOPBACK_SPELLINGS = [
  'localhost',
  'localhost.',
  'LOCALHOST.',
  'LocalHost',
  'localhost..',
  'hooks.localhost',
  'HOOKS.LOCALHOST.',
  '127.1',
  '0x7f.1',
  '0x7F.0.0.1',
  '0177.0.0.1',
  '2130706433',
  '017700000001',
  '127.000.000.001',
  '127.0.0.1.',
  '[::ffff:127.0.0.1]',
  '[::ffff:7f00:1]',
  '[0:0:0:0:0:ffff:7f00:1]',
  '[::1]',
  '0',
  '0.0.0.0',
  '[::]',
  '%6cocalhost',
  '０x7f.1',
  'ｌｏｃａｌｈｏｓｔ',
];

const OTHER_PRIVATE_SPELLINGS = ['10.1', '0xa.0.0.1', '167772161', '[::ffff:a00:1]', '169.254.169.254.', '0xa9fea9fe'];

async function webhookPatch(gw: TestGateway, id: number, url: string) {
  return gw.request('PATCH', `/devices/${id}`, { webhook_url: url });
}

describe.skipIf(noStoreAvailable)('host spellings while private URLs are not allowed', () => {
  let gw: TestGateway;
  let id: number;
  let phone: string;
  beforeAll(async () => {
    gw = await startGateway({ config: { allowPrivateUrls: false, sendIntervalMs: 0 } });
    id = (await gw.request('POST', '/devices', { package: 'BUSINESS', name: 'spellings' })).body.data.id;
    phone = (await createPairedDevice(gw, '6287520000001')).phone;
  });
  afterAll(async () => {
    await gw?.close();
  });

  it.each([...LOOPBACK_SPELLINGS, ...OTHER_PRIVATE_SPELLINGS])(
    'refuses http://%s:9/h as a webhook URL with 400 Validation failed',
    async (host) => {
      const url = `http://${host}:9/h`;
      const res = await webhookPatch(gw, id, url);
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      expect(res.body).toMatchObject({ code: 400, status: 400, message: 'Validation failed' });
      expect(res.body.errors.webhook_url[0]).toMatch(/^the host (is|resolves to) an address that is not public/);
      expect((await gw.request('GET', `/devices/${id}`)).body.data.webhook_url).not.toBe(url);
    },
  );

  it.each([...LOOPBACK_SPELLINGS, ...OTHER_PRIVATE_SPELLINGS])(
    'refuses http://%s:9/a.png as an image URL with 400 Invalid image URL',
    async (host) => {
      const res = await gw.request('POST', '/messages', {
        device: phone,
        receiver: '6287529999999',
        type: 'image',
        params: { image: { url: `http://${host}:9/a.png` } },
      });
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      expect(res.body).toMatchObject({ code: 400, status: 400, message: 'Invalid image URL' });
      expect(res.body.error).toMatch(/^destination address is not allowed; GATEWAY_ALLOWED_PRIVATE_HOSTS/);
    },
  );
});

describe.skipIf(noStoreAvailable)('host spellings when the operator allows them', () => {
  let media: TestServer;
  beforeAll(async () => {
    media = await startServer((req, res) => {
      if (req.url === '/a.png') return res.writeHead(200, { 'content-type': 'image/png' }).end(fixture('tiny.png'));
      res.writeHead(404).end();
    });
  });
  afterAll(async () => {
    await media?.close();
  });

  async function withGateway(
    config: { allowPrivateUrls: boolean; allowedPrivateHosts?: string[] },
    body: (gw: TestGateway, id: number, phone: string) => Promise<void>,
  ) {
    const gw = await startGateway({ config: { ...config, sendIntervalMs: 0 } });
    try {
      const id = (await gw.request('POST', '/devices', { package: 'BUSINESS', name: 'allowed' })).body.data.id;
      const phone = (await createPairedDevice(gw, '6287520000002')).phone;
      await body(gw, id, phone);
    } finally {
      await gw.close();
    }
  }

  const sendImage = (gw: TestGateway, phone: string, url: string) =>
    gw.request('POST', '/messages', {
      device: phone,
      receiver: '6287529999999',
      type: 'image',
      params: { image: { url } },
    });

  it('GATEWAY_ALLOW_PRIVATE_URLS=true accepts every spelling as a webhook URL and fetches media by IPv4 shorthand', async () => {
    await withGateway({ allowPrivateUrls: true }, async (gw, id, phone) => {
      for (const host of [...LOOPBACK_SPELLINGS, ...OTHER_PRIVATE_SPELLINGS]) {
        expect((await webhookPatch(gw, id, `http://${host}:9/h`)).status, host).toBe(200);
      }
      for (const host of ['127.1', '0x7f.1', '2130706433', 'localhost']) {
        const res = await sendImage(gw, phone, `http://${host}:${media.port}/a.png`);
        expect(res.status, `${host}: ${JSON.stringify(res.body)}`).toBe(200);
      }
    });
  });

  it('an allow-list entry `localhost` matches the name however it is spelled, and nothing else', async () => {
    await withGateway({ allowPrivateUrls: false, allowedPrivateHosts: ['localhost'] }, async (gw, id, phone) => {
      for (const host of ['localhost', 'localhost.', 'LOCALHOST.', 'LocalHost', 'ｌｏｃａｌｈｏｓｔ']) {
        expect((await webhookPatch(gw, id, `http://${host}:9/h`)).status, host).toBe(200);
      }
      // The name, not what it stands for: the addresses and other names under .localhost stay refused.
      for (const host of ['127.1', '[::ffff:7f00:1]', 'hooks.localhost']) {
        expect((await webhookPatch(gw, id, `http://${host}:9/h`)).status, host).toBe(400);
      }
      const res = await sendImage(gw, phone, `http://localhost:${media.port}/a.png`);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
    });
  });

  it('an allow-list CIDR 127.0.0.0/8 matches every spelling of an address inside it, and nothing outside', async () => {
    await withGateway({ allowPrivateUrls: false, allowedPrivateHosts: ['127.0.0.0/8'] }, async (gw, id, phone) => {
      for (const host of ['127.1', '0x7f.1', '2130706433', '127.0.0.1.', '[::ffff:127.0.0.1]', '[::ffff:7f00:1]']) {
        expect((await webhookPatch(gw, id, `http://${host}:9/h`)).status, host).toBe(200);
      }
      for (const host of ['10.1', '0xa.0.0.1', '[::ffff:a00:1]', '[::1]']) {
        expect((await webhookPatch(gw, id, `http://${host}:9/h`)).status, host).toBe(400);
      }
      for (const host of ['127.1', '0x7f.0.0.1']) {
        const res = await sendImage(gw, phone, `http://${host}:${media.port}/a.png`);
        expect(res.status, `${host}: ${JSON.stringify(res.body)}`).toBe(200);
      }
    });
  });
});
