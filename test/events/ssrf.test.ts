// docs/internals.md, Sending; Webhooks: webhook URLs get the address guard. With private URLs not
// allowed (the production default), a URL on loopback is never connected to;
// each attempt fails with a clear reason in the delivery log. (The other
// webhook tests run with GATEWAY_ALLOW_PRIVATE_URLS=true and deliver to the
// same kind of receiver.)
//
// PATCH refuses such URLs up front (test/devices/webhook-url.test.ts), so the
// delivery-time guard is reached here the two ways it still can be: a URL
// stored while it was allowed (an allow-list entry since removed), and a name
// that resolved to a public address when it was set and to loopback when it
// is delivered to (DNS rebinding).
import type { LookupFunction } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { noStoreAvailable, startGateway, type TestGateway } from '../helpers/gateway.js';
import { sandboxQrText, waitForDevice } from '../helpers/pairing.js';
import { waitFor } from '../helpers/wait.js';
import { deliveries, quickWebhooks, startReceiver, type Receiver } from './helpers.js';

// First answer public (the check when the URL is set), every later one loopback.
let rebindCalls = 0;
const rebinding: LookupFunction = (_hostname, options, callback) => {
  const address = ++rebindCalls === 1 ? '93.184.216.34' : '127.0.0.1';
  setImmediate(() => {
    if (options.all) callback(null, [{ address, family: 4 }]);
    else callback(null, address, 4);
  });
};

describe.skipIf(noStoreAvailable)('webhook URLs on non-public addresses', () => {
  let gw: TestGateway;
  let hooks: Receiver;
  beforeAll(async () => {
    hooks = await startReceiver();
    gw = await startGateway({
      config: { allowPrivateUrls: false },
      build: { webhooks: quickWebhooks, outboundLookup: rebinding },
    });
  });
  afterAll(async () => {
    await gw?.close();
    await hooks?.close();
  });

  async function pairedWith(phone: string, setUrl: (id: number) => Promise<void>) {
    const created = await gw.request('POST', '/devices', { package: 'BUSINESS', name: `hooked ${phone}` });
    const id = created.body.data.id as number;
    await setUrl(id);
    const scan = await gw.request('POST', '/sandbox/scan', { qr: await sandboxQrText(gw, id), phone });
    expect(scan.status, JSON.stringify(scan.body)).toBe(200);
    return waitForDevice(gw, id, (d) => d.paired_status === 'PAIRED' && d.connected === true, 'paired');
  }

  const stored = (url: string) => async (id: number) => {
    await gw.app.store.db.updateTable('devices').set({ webhook_url: url }).where('id', '=', id).execute();
  };
  const patched = (url: string) => async (id: number) => {
    const res = await gw.request('PATCH', `/devices/${id}`, { webhook_url: url });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
  };

  it.each([
    ['an IP literal', (port: number) => stored(`http://127.0.0.1:${port}/hooks`), '6287500000011'],
    [
      'a name rebound to loopback',
      (port: number) => patched(`http://rebind.example.test:${port}/hooks`),
      '6287500000012',
    ],
    [
      'an IPv4-mapped IPv6 literal',
      (port: number) => stored(`http://[::ffff:127.0.0.1]:${port}/hooks`),
      '6287500000013',
    ],
  ])('refuses %s: the attempt fails with the reason logged and nothing is sent', async (_what, setUrl, phone) => {
    const device = await pairedWith(phone, setUrl(hooks.port));
    const [delivery] = await waitFor(
      () => deliveries(gw, device.id),
      (list) => list[0]?.attempts.length >= 2,
      { what: 'two refused attempts' },
    );
    expect(delivery.status).toBe('pending');
    for (const attempt of delivery.attempts) {
      expect(attempt).toMatchObject({ http_status: null, error: expect.stringMatching(/^refused: .*not public/) });
    }
    expect(delivery.attempts[0].error).toContain('GATEWAY_ALLOWED_PRIVATE_HOSTS');
    expect(delivery.attempts[0].error).toContain('GATEWAY_ALLOW_PRIVATE_URLS');
    expect(hooks.received).toHaveLength(0);
  });
});
