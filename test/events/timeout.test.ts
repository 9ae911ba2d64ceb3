// docs/internals.md, Webhooks: an attempt is cut at 5 s (the production limit, not a shortened
// one) and retried; the log says so.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { noStoreAvailable, startGateway, type TestGateway } from '../helpers/gateway.js';
import { waitFor } from '../helpers/wait.js';
import { deliveries, pairedWithWebhook, startReceiver, type Receiver } from './helpers.js';

describe.skipIf(noStoreAvailable)('webhook timeout', () => {
  let gw: TestGateway;
  let hooks: Receiver;
  beforeAll(async () => {
    hooks = await startReceiver((_request, n) => (n === 1 ? 'hang' : 200));
    // Only the retry schedule is shortened; the attempt limit is the default 5 s.
    gw = await startGateway({
      config: { allowPrivateUrls: true },
      build: { webhooks: { retryScheduleMs: [50], pollIntervalMs: 50, closeGraceMs: 200 } },
    });
  });
  afterAll(async () => {
    await gw?.close();
    await hooks?.close();
  });

  it('cuts a receiver that does not answer at 5 s and retries', async () => {
    const device = await pairedWithWebhook(gw, '6287300000011', hooks.url);
    const [delivery] = await waitFor(
      () => deliveries(gw, device.id),
      (list) => list[0]?.status === 'delivered',
      { what: 'delivered on the second attempt', timeoutMs: 12_000, intervalMs: 100 },
    );
    const [first, second] = delivery.attempts;
    expect(first).toMatchObject({ http_status: null, error: 'timed out after 5000 ms' });
    expect(first.latency_ms).toBeGreaterThanOrEqual(4990);
    expect(first.latency_ms).toBeLessThan(6000);
    // attempted_at is when the attempt started (before the request reached the receiver), not when it was cut.
    const firstRequest = hooks.byId(delivery.id)[0]!;
    expect(Date.parse(first.attempted_at)).toBeLessThanOrEqual(firstRequest.at);
    expect(firstRequest.at - Date.parse(first.attempted_at)).toBeLessThan(1000);
    expect(firstRequest.headers['webhook-timestamp']).toBe(String(Math.floor(Date.parse(first.attempted_at) / 1000)));
    expect(second).toMatchObject({ http_status: 200, error: null });
    expect(hooks.byId(delivery.id)).toHaveLength(2);
  }, 20_000);
});
