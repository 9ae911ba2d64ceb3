// docs/internals.md, Webhooks: deliveries are bounded per device, so one receiver that hangs
// holds only its own device's slots; another device's events go out at once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { noStoreAvailable, startGateway, type TestGateway } from '../helpers/gateway.js';
import { waitFor } from '../helpers/wait.js';
import { pairedWithWebhook, sendChat, startReceiver, type Receiver } from './helpers.js';

describe.skipIf(noStoreAvailable)('one dead receiver', () => {
  let gw: TestGateway;
  let dead: Receiver;
  let healthy: Receiver;
  beforeAll(async () => {
    dead = await startReceiver(() => 'hang');
    healthy = await startReceiver();
    gw = await startGateway({
      config: { allowPrivateUrls: true, sendIntervalMs: 0 },
      build: {
        sandbox: { deliveryDelayMs: 5, readDelayMs: 5 },
        // Few slots in all, so that without the per-device bound the dead receiver would take every one.
        webhooks: { concurrency: 6, perDeviceConcurrency: 4, timeoutMs: 3000, pollIntervalMs: 50, closeGraceMs: 100 },
      },
    });
  });
  afterAll(async () => {
    await gw?.close();
    await dead?.close();
    await healthy?.close();
  });

  it('does not delay another device’s deliveries', async () => {
    const stuck = await pairedWithWebhook(gw, '6287600000011', dead.url);
    for (let i = 0; i < 8; i++) await sendChat(gw, stuck.phone, '6287699990011', `to nowhere ${i}`);
    await waitFor(
      () => dead.received.length,
      (n) => n >= 4,
      { what: 'the dead receiver holding its slots' },
    );

    const started = Date.now();
    const fine = await pairedWithWebhook(gw, '6287600000012', healthy.url);
    for (let i = 0; i < 3; i++) await sendChat(gw, fine.phone, '6287699990012', `fine ${i}`);
    const events = await waitFor(
      () => healthy.events(),
      (list) => list.filter((e) => e.type === 'message.delivered').length === 3,
      { what: 'the healthy device’s events', timeoutMs: 2500 },
    );
    // Well inside the dead receiver's 3 s timeout: nothing waited for it.
    expect(Date.now() - started).toBeLessThan(2500);
    expect(events).toHaveLength(7);
    for (const request of healthy.received) {
      expect(request.at - Date.parse(JSON.parse(request.body).created_at)).toBeLessThan(1000);
    }
    // The dead receiver never had more than its device's share.
    expect(dead.received.length).toBe(4);
  });
});
