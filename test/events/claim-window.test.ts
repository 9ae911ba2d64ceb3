// Most claims look at the first due rows only (a bounded cost, whatever the backlog); a lane whose rows sit behind a
// longer backlog of lanes at their bound must still be served within the full scan's period, not at the next poll.
// Here a hanging receiver holds its device's slots with 600 older deliveries due (more than one claim looks at),
// and the poll is 5 s: another device's events must still arrive at once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { noStoreAvailable, startGateway, type TestGateway } from '../helpers/gateway.js';
import { waitFor } from '../helpers/wait.js';
import { pairedWithWebhook, sendChat, startReceiver, waitForEvent, type Receiver } from './helpers.js';

const BACKLOG = 600;

describe.skipIf(noStoreAvailable)('a lane behind a long backlog of lanes at their bound', () => {
  let gw: TestGateway;
  let stuck: Receiver;
  let healthy: Receiver;
  beforeAll(async () => {
    stuck = await startReceiver(() => 'hang');
    healthy = await startReceiver();
    gw = await startGateway({
      config: { allowPrivateUrls: true, sendIntervalMs: 0 },
      build: {
        sandbox: { deliveryDelayMs: 5, readDelayMs: 5 },
        // The hanging receiver's attempts outlast the test; the poll is too slow to be what finds the events.
        webhooks: { timeoutMs: 10_000, pollIntervalMs: 5_000, closeGraceMs: 100, perDeviceConcurrency: 4 },
      },
    });
  });
  afterAll(async () => {
    await gw?.close();
    await stuck?.close();
    await healthy?.close();
  });

  it('is served within the full scan’s period, not at the next poll', async () => {
    const { db } = gw.app.store;
    const held = (await gw.request('POST', '/devices', { package: 'BUSINESS', name: 'held' })).body.data;
    const { account_id } = await db
      .selectFrom('devices')
      .select('account_id')
      .where('id', '=', held.id)
      .executeTakeFirstOrThrow();
    await db.updateTable('devices').set({ webhook_url: stuck.url }).where('id', '=', held.id).execute();
    const now = Date.now();
    const rows = Array.from({ length: BACKLOG }, (_, i) => ({
      id: `evt_window_${String(i).padStart(6, '0')}`,
      account_id,
      device_id: held.id,
      type: 'message.sent',
      payload: JSON.stringify({ id: `evt_window_${i}`, type: 'message.sent', data: { n: i } }),
      url: stuck.url,
      status: 'pending',
      attempts: 0,
      next_attempt_at: now - 60_000 + i,
      locked_until: null,
      created_at: now - 60_000 + i,
      delivered_at: null,
      failed_at: null,
    }));
    await db.transaction().execute(async (trx) => {
      for (let i = 0; i < rows.length; i += 200)
        await trx
          .insertInto('webhook_events')
          .values(rows.slice(i, i + 200))
          .execute();
    });

    // Pairing records device.paired, which rings the deliverer: it takes the held lane's first four.
    const fine = await pairedWithWebhook(gw, '6287800000021', healthy.url);
    await waitFor(
      () => stuck.received.length,
      (n) => n >= 4,
      { what: 'the hanging receiver holding its slots' },
    );
    await waitForEvent(healthy, 'device.paired', () => true, 2_000);

    const started = Date.now();
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push(await sendChat(gw, fine.phone, '6287899990021', `behind ${i}`));
    for (const id of ids) {
      for (const type of ['message.sent', 'message.delivered']) {
        await waitForEvent(healthy, type, (event) => event.data.id === id, 2_500);
      }
    }
    // Well inside the 5 s poll: each was found by a claim its own events woke, or the full scan soon after.
    expect(Date.now() - started).toBeLessThan(2_500);
    // The held lane never had more than its share.
    expect(stuck.received.length).toBe(4);
  });
});
