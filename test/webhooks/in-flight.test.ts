// GATEWAY_WEBHOOK_IN_FLIGHT (docs/webhooks.md, Delivery): how many deliveries of one device to one destination are in
// flight at once. A receiver that never answers holds exactly that many, however many events wait behind them; with
// no setting, 4.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { noStoreAvailable, startGateway, type TestGateway } from '../helpers/gateway.js';
import { waitFor } from '../helpers/wait.js';
import { pairedWithWebhook, sendChat, startReceiver, type Receiver } from '../events/helpers.js';

/** Claims come at least this often, so a bound that let more through would show within a few of them. */
const POLL_MS = 50;

describe.skipIf(noStoreAvailable)('deliveries in flight per device and destination', () => {
  let hanging: Receiver;
  const gateways: TestGateway[] = [];
  beforeAll(async () => {
    hanging = await startReceiver(() => 'hang');
  });
  afterAll(async () => {
    for (const gw of gateways) await gw.close();
    await hanging?.close();
  });

  async function heldBy(webhookInFlight: number | undefined, phone: string): Promise<number> {
    const gw = await startGateway({
      config: {
        allowPrivateUrls: true,
        sendIntervalMs: 0,
        ...(webhookInFlight === undefined ? {} : { webhookInFlight }),
      },
      build: {
        sandbox: { deliveryDelayMs: 5, readDelayMs: 5 },
        webhooks: { timeoutMs: 30_000, pollIntervalMs: POLL_MS, closeGraceMs: 100 },
      },
    });
    gateways.push(gw);
    const device = await pairedWithWebhook(gw, phone, hanging.url);
    const from = hanging.received.length;
    // Each message makes several events (sent, delivered, read): far more than either bound.
    for (let i = 0; i < 12; i++) await sendChat(gw, device.phone, '6287699990031', `held ${i}`);
    const bound = webhookInFlight ?? 4;
    await waitFor(
      () => hanging.received.length - from,
      (n) => n >= bound,
      { what: `${bound} deliveries reaching the receiver` },
    );
    // Twenty claims later (the poll, and every event recorded meanwhile wakes one): still no more than the bound.
    await new Promise((resolve) => setTimeout(resolve, 20 * POLL_MS));
    return hanging.received.length - from;
  }

  it('holds 4 with no setting', async () => {
    expect(await heldBy(undefined, '6287600000031')).toBe(4);
  });

  it('holds as many as GATEWAY_WEBHOOK_IN_FLIGHT says (9)', async () => {
    expect(await heldBy(9, '6287600000032')).toBe(9);
  });
});
