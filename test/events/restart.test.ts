// docs/internals.md, Webhooks: delivery is durable. Events recorded while the receiver is down
// are still delivered, every one of them, after the gateway restarts.
import { afterAll, describe, expect, it } from 'vitest';
import { noStoreAvailable, startGateway, type TestGateway } from '../helpers/gateway.js';
import { waitFor } from '../helpers/wait.js';
import { pairedWithWebhook, sendChat, startReceiver, type Receiver } from './helpers.js';

const PHONE = '6287400000011';

describe.skipIf(noStoreAvailable)('webhook delivery across a restart', () => {
  const open: Array<{ close(): Promise<unknown> }> = [];
  afterAll(async () => {
    for (const thing of open.reverse()) await thing.close();
  });

  it('a receiver down while the gateway restarts gets every event afterwards', async () => {
    const build = {
      sandbox: { deliveryDelayMs: 5, readDelayMs: 5 },
      webhooks: { retryScheduleMs: [100], pollIntervalMs: 50, closeGraceMs: 200 },
    };
    const config = { allowPrivateUrls: true, sendIntervalMs: 0 };
    const first = await startGateway({ config, build });
    open.push(first);

    let hooks: Receiver = await startReceiver();
    const device = await pairedWithWebhook(first, PHONE, hooks.url);
    await waitFor(
      () => hooks.received.length,
      (n) => n === 1,
      { what: 'device.paired delivered' },
    );
    const port = hooks.port;
    await hooks.close();

    // The receiver is down: these events fail their attempts and wait for a retry.
    const ids = [];
    for (let i = 0; i < 5; i++) ids.push(await sendChat(first, PHONE, '6287499990011', `while down ${i}`));
    const recorded = async (gw: TestGateway) =>
      gw.app.store.db
        .selectFrom('webhook_events')
        .select(['id', 'status', 'attempts'])
        .where('device_id', '=', device.id)
        .execute();
    await waitFor(
      () => recorded(first),
      // A receiver that keeps failing is paused as a whole, so the later events may
      // wait without an attempt of their own; at least the first ones were tried.
      (rows) => {
        const pending = rows.filter((r) => r.status === 'pending');
        return rows.length === 11 && pending.length === 10 && pending.some((r) => r.attempts > 0);
      },
      { what: '10 message events pending, some tried' },
    );
    await first.close({ keepStore: true });

    const second = await startGateway({ location: first.location, config, build });
    open.push(second);
    await second.app.ready(); // what listening does in production: workers start
    hooks = await startReceiver(() => 200, port);
    open.push(hooks);
    const rows = await waitFor(
      () => recorded(second),
      (list) => list.length === 11 && list.every((r) => r.status === 'delivered'),
      { what: 'all delivered after the restart', timeoutMs: 8000 },
    );
    const got = new Set(hooks.received.map((r) => r.headers['webhook-id']));
    for (const row of rows.filter((r) => r.attempts > 1)) expect(got.has(row.id)).toBe(true);
    expect(got.size).toBe(10);
    const sentFor = hooks
      .events()
      .filter((e) => e.type === 'message.sent')
      .map((e) => e.data.id);
    expect(new Set(sentFor)).toEqual(new Set(ids));
  });
});
