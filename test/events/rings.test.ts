// The store tells the event log's followers after every commit that recorded events (src/store/appends.ts), so the
// webhook deliverer and the streams look at once whichever path recorded them. The clock here never moves: the
// deliverer's and the log watch's polls never fire, so an event reaches its receiver and an SSE consumer only through
// that ring. Paths: a queued message cancelled (message actions, which once rang nothing), a phone's reaction and a
// phone's poll vote (the network's changes); and the store's own rule (a rollback rings nothing).
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { devicesRepository } from '../../src/devices/repository.js';
import { eventRows, insertEvents } from '../../src/events/record.js';
import { noStoreAvailable, startGateway, storeKind, TEST_TOKEN, type TestGateway } from '../helpers/gateway.js';
import { waitFor } from '../helpers/wait.js';
import { pairedWithWebhook, startReceiver, waitForEvent, type Receiver } from './helpers.js';
import { closeClients, openSse, type SseClient } from './log-helpers.js';

const PHONE = '6287700000091';
const SLOW = '6287700000092';
const FRIEND = '6287799990091';
/** Far beyond any wait below: only a ring delivers. */
const NEVER = 3_600_000;

describe.skipIf(noStoreAvailable)(`events reach their followers at their commit, with no poll (${storeKind})`, () => {
  const clock = new ManualClock(Date.now());
  let gw: TestGateway;
  let hooks: Receiver;
  let base: string;
  let device: any;
  let slow: any;
  beforeAll(async () => {
    hooks = await startReceiver();
    gw = await startGateway({
      clock,
      config: { allowPrivateUrls: true, sendIntervalMs: 0 },
      build: {
        sandbox: { deliveryDelayMs: 5, readDelayMs: 5 },
        webhooks: { retryScheduleMs: [50, 100], pollIntervalMs: NEVER, closeGraceMs: 200 },
        eventLog: { pollMs: NEVER },
      },
    });
    await gw.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(gw.app.server.address() as AddressInfo).port}`;
    device = await pairedWithWebhook(gw, PHONE, hooks.url);
    slow = await pairedWithWebhook(gw, SLOW, hooks.url);
    // Its second message waits ten minutes of a clock that never moves: it stays queued.
    expect((await gw.request('PATCH', `/devices/${slow.id}`, { send_interval_ms: 600_000 })).status).toBe(200);
  });
  afterAll(async () => {
    closeClients();
    await gw?.close();
    await hooks?.close();
  });

  const message = async (id: string) => (await gw.request('GET', `/messages/${id}`)).body.data;
  const send = async (from: string, params: Record<string, unknown>, type = 'chat') => {
    const res = await gw.request('POST', '/messages', { device: from, receiver: FRIEND, type, params });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.data.id as string;
  };
  /** The message delivered to the phone (which reads nothing by itself): its last status change has committed. */
  const settled = (id: string) =>
    waitFor(
      () => message(id),
      (m) => m.status === 'delivered',
      { what: `${id} delivered` },
    );
  const stream = (deviceId: number, type: string) =>
    openSse(`${base}/events/stream?device=${deviceId}&types=${type}`, { authorization: `Bearer ${TEST_TOKEN}` });
  const streamed = (client: SseClient, match: (data: any) => boolean) =>
    waitFor(
      () => client.frames.map((f) => JSON.parse(f.data!)).find(match),
      (found) => found !== undefined,
      { what: 'the event on the stream', timeoutMs: 3_000 },
    );

  it('a queued message cancelled: message.failed at the webhook and on the stream at once', async () => {
    await settled(await send(SLOW, { text: 'first' }));
    const queued = await send(SLOW, { text: 'second' });
    const client = await stream(slow.id, 'message.failed');
    const cancelled = await gw.request('DELETE', `/messages/${queued}`);
    expect(cancelled.body.message).toBe('Message cancelled');
    await waitForEvent(hooks, 'message.failed', (e) => e.data.id === queued, 3_000);
    await streamed(client, (e) => e.data.id === queued);
  });

  it("a phone's reaction: message.reaction at the webhook and on the stream at once", async () => {
    const id = await send(PHONE, { text: 'react to this' });
    await settled(id);
    const client = await stream(device.id, 'message.reaction');
    const reacted = await gw.request('POST', `/sandbox/phones/${FRIEND}/reactions`, { message_id: id, emoji: '👍' });
    expect(reacted.status, JSON.stringify(reacted.body)).toBe(200);
    await waitForEvent(hooks, 'message.reaction', (e) => e.data.message_id === id, 3_000);
    await streamed(client, (e) => e.data.message_id === id);
  });

  it("a phone's vote on a poll: poll.vote at the webhook and on the stream at once", async () => {
    const id = await send(PHONE, { name: 'Lunch?', options: ['rice', 'noodles'] }, 'poll');
    await settled(id);
    const client = await stream(device.id, 'poll.vote');
    const voted = await gw.request('POST', `/sandbox/phones/${FRIEND}/votes`, { message_id: id, options: ['rice'] });
    expect(voted.status, JSON.stringify(voted.body)).toBe(200);
    await waitForEvent(hooks, 'poll.vote', (e) => e.data.message_id === id, 3_000);
    await streamed(client, (e) => e.data.message_id === id);
  });

  it('the store rings once per commit that appended events, after it; a rollback and other writes ring nothing', async () => {
    const { db } = gw.app.store;
    const row = (await devicesRepository.findById(db, device.id))!;
    let rings = 0;
    const stop = gw.app.store.appends.subscribe(() => (rings += 1));
    try {
      const failed = db.transaction().execute(async (trx) => {
        await insertEvents(trx, [await eventRows(trx, row, 'message.sent', { n: 1 }, clock.now())]);
        throw new Error('rolled back on purpose');
      });
      await expect(failed).rejects.toThrow('rolled back on purpose');
      await db.updateTable('devices').set({ name: 'renamed' }).where('id', '=', device.id).execute();
      expect(rings).toBe(0);
      let seenInside = -1;
      await db.transaction().execute(async (trx) => {
        const made = [];
        for (let n = 0; n < 3; n++) made.push(await eventRows(trx, row, 'message.sent', { n }, clock.now()));
        await insertEvents(trx, made);
        seenInside = rings;
      });
      expect(seenInside).toBe(0);
      expect(rings).toBe(1);
      await insertEvents(db, [await eventRows(db, row, 'message.sent', { n: 4 }, clock.now())]);
      expect(rings).toBe(2);
    } finally {
      stop();
    }
  });
});
