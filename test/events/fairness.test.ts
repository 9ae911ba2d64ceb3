// Issue 10, item 17: one dead receiver must not delay everyone's webhooks.
// A device with thousands of due deliveries to a receiver that refuses
// connections is backed off as a whole (its backlog moved past the pause, not
// tried row by row), and another device's events go out at once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { noStoreAvailable, startGateway, type TestGateway } from '../helpers/gateway.js';
import { waitFor } from '../helpers/wait.js';
import { closedPort } from '../outbound/helpers.js';
import { pairedWithWebhook, sendChat, startReceiver, waitForEvent, type Receiver } from './helpers.js';

const BACKLOG = 4000;

describe.skipIf(noStoreAvailable)('a dead receiver with a large backlog', () => {
  let gw: TestGateway;
  let healthy: Receiver;
  beforeAll(async () => {
    healthy = await startReceiver();
    gw = await startGateway({
      config: { allowPrivateUrls: true, sendIntervalMs: 0 },
      build: {
        sandbox: { deliveryDelayMs: 5, readDelayMs: 5 },
        // The pause after repeated failures follows this schedule; long enough to outlast the test.
        webhooks: { retryScheduleMs: [60_000], pollIntervalMs: 50, closeGraceMs: 200 },
      },
    });
  });
  afterAll(async () => {
    await gw?.close();
    await healthy?.close();
  });

  it('is paused as a whole, and another device’s events are delivered at once', async () => {
    const { db } = gw.app.store;
    const dead = (await gw.request('POST', '/devices', { package: 'BUSINESS', name: 'dead' })).body.data;
    const { account_id } = await db
      .selectFrom('devices')
      .select('account_id')
      .where('id', '=', dead.id)
      .executeTakeFirstOrThrow();
    const url = `http://127.0.0.1:${await closedPort()}/hooks`;
    await db.updateTable('devices').set({ webhook_url: url }).where('id', '=', dead.id).execute();
    const now = Date.now();
    const rows = Array.from({ length: BACKLOG }, (_, i) => ({
      id: `evt_backlog_${String(i).padStart(6, '0')}`,
      account_id,
      device_id: dead.id,
      type: 'message.sent',
      payload: JSON.stringify({ id: `evt_backlog_${i}`, type: 'message.sent', data: { n: i } }),
      url,
      status: 'pending',
      attempts: 0,
      next_attempt_at: now - 60_000 + i,
      locked_until: null,
      created_at: now - 60_000 + i,
      delivered_at: null,
      failed_at: null,
    }));
    // All at once, as a backlog that built up while the receiver was down.
    await db.transaction().execute(async (trx) => {
      for (let i = 0; i < rows.length; i += 250)
        await trx
          .insertInto('webhook_events')
          .values(rows.slice(i, i + 250))
          .execute();
    });

    // The deliverer finds the backlog by its poll and starts failing on it.
    await waitFor(
      async () => (await db.selectFrom('webhook_attempts').select('id').limit(3).execute()).length,
      (n) => n >= 3,
      { what: 'the dead receiver refusing attempts' },
    );

    const fine = await pairedWithWebhook(gw, '6287700000001', healthy.url);
    const started = Date.now();
    const id = await sendChat(gw, fine.phone, '6287799990001', 'fair');
    await waitForEvent(healthy, 'message.sent', (e) => e.data.id === id, 5000);
    const latency = Date.now() - started;
    // Hundreds of ms of margin for a loaded machine; without the pause it waits for thousands of refused attempts.
    expect(latency).toBeLessThan(1500);

    // The backlog was not tried row by row: a few probes, then it waits for the pause to end.
    const attempted = await db
      .selectFrom('webhook_attempts')
      .innerJoin('webhook_events', 'webhook_events.id', 'webhook_attempts.event_id')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('webhook_events.device_id', '=', dead.id)
      .executeTakeFirstOrThrow();
    expect(Number(attempted.n)).toBeLessThan(50);
    const moved = await waitFor(
      async () =>
        (
          await db
            .selectFrom('webhook_events')
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .where('device_id', '=', dead.id)
            .where('status', '=', 'pending')
            .where('next_attempt_at', '>=', started + 30_000)
            .executeTakeFirstOrThrow()
        ).n,
      (n) => Number(n) === BACKLOG,
      { what: 'the whole backlog waiting for the end of the pause' },
    );
    expect(Number(moved)).toBe(BACKLOG);
  });
});
