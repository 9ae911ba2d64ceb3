// docs/internals.md, Webhooks: an attempt is cut at its limit and retried; the log says so. The production limit
// (5 s, DECISIONS 6) is pinned by its constant below; the gateway here is given a shorter one, so the file waits
// 400 ms a store instead of 5 s.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_ATTEMPT_TIMEOUT_MS } from '../../src/events/attempt.js';
import { noStoreAvailable, startGateway, type TestGateway } from '../helpers/gateway.js';
import { waitFor } from '../helpers/wait.js';
import { deliveries, pairedWithWebhook, startReceiver, type Receiver } from './helpers.js';

const LIMIT_MS = 400;

it('the production limit on one attempt is 5 s, the deliverer’s default', () => {
  expect(DEFAULT_ATTEMPT_TIMEOUT_MS).toBe(5_000);
});

describe.skipIf(noStoreAvailable)('webhook timeout', () => {
  let gw: TestGateway;
  let hooks: Receiver;
  beforeAll(async () => {
    hooks = await startReceiver((_request, n) => (n === 1 ? 'hang' : 200));
    gw = await startGateway({
      config: { allowPrivateUrls: true },
      build: { webhooks: { timeoutMs: LIMIT_MS, retryScheduleMs: [50], pollIntervalMs: 50, closeGraceMs: 200 } },
    });
  });
  afterAll(async () => {
    await gw?.close();
    await hooks?.close();
  });

  it('cuts a receiver that does not answer at the limit and retries', async () => {
    const device = await pairedWithWebhook(gw, '6287300000011', hooks.url);
    const [delivery] = await waitFor(
      () => deliveries(gw, device.id),
      (list) => list[0]?.status === 'delivered',
      { what: 'delivered on the second attempt', timeoutMs: 12_000, intervalMs: 100 },
    );
    const [first, second] = delivery.attempts;
    expect(first).toMatchObject({ http_status: null, error: `timed out after ${LIMIT_MS} ms` });
    expect(first.latency_ms).toBeGreaterThanOrEqual(LIMIT_MS - 10);
    expect(first.latency_ms).toBeLessThan(LIMIT_MS + 1000);
    // attempted_at is when the attempt started (before the request reached the receiver), not when it was cut.
    const firstRequest = hooks.byId(delivery.id)[0]!;
    expect(Date.parse(first.attempted_at)).toBeLessThanOrEqual(firstRequest.at);
    expect(firstRequest.at - Date.parse(first.attempted_at)).toBeLessThan(1000);
    expect(firstRequest.headers['webhook-timestamp']).toBe(String(Math.floor(Date.parse(first.attempted_at) / 1000)));
    expect(second).toMatchObject({ http_status: 200, error: null });
    expect(hooks.byId(delivery.id)).toHaveLength(2);
  }, 20_000);
});
