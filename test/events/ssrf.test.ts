// DECISIONS 5 and 6: webhook URLs get the address guard. With private URLs not
// allowed (the production default), a URL on loopback is never connected to;
// each attempt fails with a clear reason in the delivery log. (The other
// webhook tests run with GATEWAY_ALLOW_PRIVATE_URLS=true and deliver to the
// same kind of receiver.)
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { noStoreAvailable, startGateway, type TestGateway } from '../helpers/gateway.js';
import { waitFor } from '../helpers/wait.js';
import { deliveries, pairedWithWebhook, quickWebhooks, startReceiver, type Receiver } from './helpers.js';

describe.skipIf(noStoreAvailable)('webhook URLs on non-public addresses', () => {
  let gw: TestGateway;
  let hooks: Receiver;
  beforeAll(async () => {
    hooks = await startReceiver();
    gw = await startGateway({ config: { allowPrivateUrls: false }, build: { webhooks: quickWebhooks } });
  });
  afterAll(async () => {
    await gw?.close();
    await hooks?.close();
  });

  it.each([
    ['an IP literal', (port: number) => `http://127.0.0.1:${port}/hooks`, '6287500000011'],
    ['a name resolving to loopback', (port: number) => `http://localhost:${port}/hooks`, '6287500000012'],
    ['an IPv4-mapped IPv6 literal', (port: number) => `http://[::ffff:127.0.0.1]:${port}/hooks`, '6287500000013'],
  ])('refuses %s: the attempt fails with the reason logged and nothing is sent', async (_what, url, phone) => {
    const device = await pairedWithWebhook(gw, phone, url(hooks.port));
    const [delivery] = await waitFor(
      () => deliveries(gw, device.id),
      (list) => list[0]?.attempts.length >= 2,
      { what: 'two refused attempts' },
    );
    expect(delivery.status).toBe('pending');
    for (const attempt of delivery.attempts) {
      expect(attempt).toMatchObject({ http_status: null, error: expect.stringMatching(/^refused: .*not public/) });
    }
    expect(delivery.attempts[0].error).toContain('GATEWAY_ALLOW_PRIVATE_URLS');
    expect(hooks.received).toHaveLength(0);
  });
});
