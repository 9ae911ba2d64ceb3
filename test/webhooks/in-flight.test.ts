// GATEWAY_WEBHOOK_IN_FLIGHT (docs/webhooks.md, Answering, retries and order): how many deliveries of one device to
// one destination are in flight at once. A receiver that never answers has exactly that many requests open at once,
// however many events wait behind them; with no setting, 4. Each case has its own gateway and its own receiver, which
// counts the requests it holds open (a request the gateway gives up on closes before its retry opens).
import { afterAll, describe, expect, it } from 'vitest';
import { noStoreAvailable, startGateway, type TestGateway } from '../helpers/gateway.js';
import { waitFor } from '../helpers/wait.js';
import { pairedWithWebhook, sendChat } from '../events/helpers.js';
import { startServer } from '../outbound/helpers.js';

/** Claims come at least this often, so a bound that let more through would show within a few of them. */
const POLL_MS = 50;

interface HangingReceiver {
  readonly url: string;
  open(): number;
  mostOpen(): number;
  close(): Promise<void>;
}

async function hangingReceiver(): Promise<HangingReceiver> {
  let open = 0;
  let most = 0;
  const server = await startServer((_req, res) => {
    open++;
    most = Math.max(most, open);
    res.on('close', () => open--);
    // Never answered.
  });
  return { url: server.url('/hook'), open: () => open, mostOpen: () => most, close: () => server.close() };
}

describe.skipIf(noStoreAvailable)('deliveries in flight per device and destination', () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });

  async function mostHeldBy(webhookInFlight: number | undefined, phone: string): Promise<number> {
    const receiver = await hangingReceiver();
    cleanups.push(() => receiver.close());
    const gw: TestGateway = await startGateway({
      config: {
        allowPrivateUrls: true,
        sendIntervalMs: 0,
        ...(webhookInFlight === undefined ? {} : { webhookInFlight }),
      },
      build: {
        sandbox: { deliveryDelayMs: 5, readDelayMs: 5 },
        // Longer than the case: no attempt is given up on (and retried) while it looks.
        webhooks: { timeoutMs: 120_000, pollIntervalMs: POLL_MS, closeGraceMs: 100 },
      },
    });
    cleanups.push(() => gw.close());
    const device = await pairedWithWebhook(gw, phone, receiver.url);
    // Each message makes several events (sent, delivered, read): far more than either bound.
    for (let i = 0; i < 12; i++) await sendChat(gw, device.phone, '6287699990031', `held ${i}`);
    const bound = webhookInFlight ?? 4;
    await waitFor(
      () => receiver.open(),
      (n) => n >= bound,
      // Once 29 s on a loaded host: a guard against a hang, not a measure of speed.
      { what: `${bound} deliveries open at the receiver`, timeoutMs: 60_000 },
    );
    // Twenty claims later (the poll, and every event recorded meanwhile wakes one): still no more than the bound.
    await new Promise((resolve) => setTimeout(resolve, 20 * POLL_MS));
    return receiver.mostOpen();
  }

  it('holds 4 with no setting', async () => {
    expect(await mostHeldBy(undefined, '6287600000031')).toBe(4);
  }, 90_000);

  it('holds as many as GATEWAY_WEBHOOK_IN_FLIGHT says (9)', async () => {
    expect(await mostHeldBy(9, '6287600000032')).toBe(9);
  }, 90_000);
});
