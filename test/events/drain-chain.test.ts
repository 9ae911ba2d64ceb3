// A webhook backlog drains by itself, without new events and without the poll (issues 25 and 28): each finished
// attempt of a lane at its bound asks for the next claim. A claim in flight when attempts end may not see the
// slots they free (their leases were counted already); those attempts must ask for one more claim after it. When
// they did not, the deliverer stopped until its next poll (1 s by default) after such a claim: a backlog of a few
// devices drained at one lane's bound a second, about 150 deliveries a second on PostgreSQL after a burst.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { noStoreAvailable, startGateway, type TestGateway } from '../helpers/gateway.js';
import { waitFor } from '../helpers/wait.js';
import { pairedWithWebhook, sendChat, startReceiver, type Receiver } from './helpers.js';

const PHONE = '6287400000071';
const CHATS = 40;

describe.skipIf(noStoreAvailable)('a webhook backlog drains by itself', () => {
  let gw: TestGateway;
  let hooks: Receiver;
  beforeAll(async () => {
    hooks = await startReceiver();
    gw = await startGateway({
      config: { allowPrivateUrls: true, sendIntervalMs: 0 },
      build: {
        sandbox: { deliveryDelayMs: 5, readDelayMs: 5 },
        // The poll would hide a lost wake-up: it is set far beyond the test's wait.
        webhooks: { pollIntervalMs: 600_000, timeoutMs: 60_000, closeGraceMs: 200 },
      },
    });
  });
  afterAll(async () => {
    await gw?.close();
    await hooks?.close();
  });

  it('every delivery of a backlog is made, one claim after another, with no new event to wake the deliverer', async () => {
    // The receiver holds its answers while the backlog is recorded: the lane's first attempts wait at the gate.
    let open: (status: number) => void = () => undefined;
    const gate = new Promise<number>((resolve) => (open = resolve));
    hooks.respond = () => gate;
    const device = await pairedWithWebhook(gw, PHONE, hooks.url);
    for (let i = 0; i < CHATS; i++) await sendChat(gw, PHONE, '6287499990071', `backlog ${i}`);
    const rows = () =>
      gw.app.store.db.selectFrom('webhook_events').select(['status']).where('device_id', '=', device.id).execute();
    // Recorded, all of them: the pairing, and each chat's sent and delivered (the phone reads some too).
    let last = -1;
    await waitFor(
      async () => (await rows()).length,
      (n) => {
        const stable = n === last && n >= 1 + 2 * CHATS;
        last = n;
        return stable;
      },
      { what: 'the backlog recorded', timeoutMs: 20_000, intervalMs: 300 },
    );
    const total = last;
    hooks.respond = () => 200;
    open(200);
    const delivered = await waitFor(
      async () => (await rows()).filter((r) => r.status === 'delivered').length,
      (n) => n === total,
      { what: `all ${total} deliveries made`, timeoutMs: 20_000, intervalMs: 100 },
    );
    expect(delivered).toBe(total);
    expect(new Set(hooks.received.map((r) => r.headers['webhook-id'])).size).toBe(total);
  }, 60_000);
});
