// One dead receiver never delays another (DECISIONS 17): ten webhooks of one account on one device, then two
// of them dead (one accepts connections and never answers, one refuses them). The other eight's delivery
// latency (arrival at the receiver minus the event's created_at) is measured in both runs; with the dead
// ones it stays within twice the healthy run's p95 plus 2 s. Attempts to the hanging receiver hold their
// lane for the whole test (a 20 s time limit), so a deliverer that bounded work per device, not per
// destination, would hold every other destination behind them for 20 s: ten times the margin, which is
// there for the host (a run beside other test files once measured 269 ms, then 608, with nothing dead in
// the way of the eight).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { noStoreAvailable, startGateway, type TestGateway } from '../helpers/gateway.js';
import { sandboxQrText, waitForDevice } from '../helpers/pairing.js';
import { waitFor } from '../helpers/wait.js';
import { closedPort } from '../outbound/helpers.js';
import { sendChat, startReceiver, type Receiver } from '../events/helpers.js';

const PHONE = '6287722220001';
const PEER = '6287722229999';
const MESSAGES = 20;
/** Events per message every receiver takes: message.sent and message.delivered. */
const TYPES = ['message.sent', 'message.delivered'];

function p95(values: number[]): number {
  const sorted = [...values].sort((x, y) => x - y);
  return sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.95) - 1)]!;
}

describe.skipIf(noStoreAvailable)('a dead receiver among ten webhooks', () => {
  let gw: TestGateway;
  const healthy: Receiver[] = [];
  let hanging: Receiver;
  beforeAll(async () => {
    gw = await startGateway({
      config: { allowPrivateUrls: true, sendIntervalMs: 0 },
      build: {
        sandbox: { deliveryDelayMs: 5, readDelayMs: 5 },
        webhooks: {
          pollIntervalMs: 50,
          retryScheduleMs: [60_000],
          timeoutMs: 20_000,
          leaseMs: 30_000,
          closeGraceMs: 200,
        },
      },
    });
    for (let i = 0; i < 10; i++) healthy.push(await startReceiver());
    hanging = await startReceiver(() => 'hang');
  });
  afterAll(async () => {
    await gw?.close();
    for (const r of [...healthy, hanging]) await r?.close();
  });

  /** Sends MESSAGES chats; answers the delivery latencies at the first eight receivers once all arrived. */
  async function run(label: string): Promise<number[]> {
    const ids = await Promise.all(
      Array.from({ length: MESSAGES }, (_, i) => sendChat(gw, PHONE, PEER, `${label} ${i}`)),
    );
    const wanted = new Set(ids);
    const tracked = healthy.slice(0, 8);
    const arrivals = () =>
      tracked.flatMap((r) =>
        r.received
          .map((req) => ({ event: JSON.parse(req.body), at: req.at }))
          .filter(({ event }) => TYPES.includes(event.type) && wanted.has(event.data.id)),
      );
    await waitFor(
      () => arrivals().length,
      (n) => n === tracked.length * MESSAGES * TYPES.length,
      {
        what: `every ${label} event at the eight receivers`,
        timeoutMs: 30_000,
      },
    );
    return arrivals().map(({ event, at }) => at - Date.parse(event.created_at));
  }

  it('leaves the other destinations’ latency unchanged', async () => {
    const id = (await gw.request('POST', '/devices', { package: 'BUSINESS', name: 'ten hooks' })).body.data.id;
    const hooks: string[] = [];
    for (const r of healthy) {
      const res = await gw.request('POST', '/webhooks', { url: r.url, devices: [id], events: TYPES });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      hooks.push(res.body.data.id);
    }
    const scan = await gw.request('POST', '/sandbox/scan', { qr: await sandboxQrText(gw, id), phone: PHONE });
    expect(scan.status).toBe(200);
    await waitForDevice(gw, id, (d) => d.connected === true, 'connected');
    await run('warm-up');

    const baseline = await run('healthy');

    // Two of the ten die: one never answers, one refuses connections.
    const refused = `http://127.0.0.1:${await closedPort()}/hooks`;
    expect((await gw.request('PATCH', `/webhooks/${hooks[8]}`, { url: hanging.url })).status).toBe(200);
    expect((await gw.request('PATCH', `/webhooks/${hooks[9]}`, { url: refused })).status).toBe(200);
    const withDead = await run('dead');

    const limit = 2 * p95(baseline) + 2_000;
    expect(p95(withDead), JSON.stringify({ baseline: p95(baseline), withDead: p95(withDead) })).toBeLessThanOrEqual(
      limit,
    );
    // The dead ones were really tried: the hanging one holds requests open, the refused one logged failures.
    expect(hanging.received.length).toBeGreaterThan(0);
    const log = await gw.request('GET', `/webhooks/${hooks[9]}/deliveries?status=pending&per_page=100`);
    const errors = log.body.data.flatMap((d: any) => d.attempts.map((a: any) => a.error));
    expect(errors).toContain('connection refused');
  });
});
