// Account webhooks delivering (DECISIONS 17): one delivery per matching destination, the device's own
// webhook_url as one more; filters by device and type, formats and custom headers exact; each destination
// signs with its own secret under the event's id; a change is seen by the next event; a manual retry;
// a deletion takes the webhook's deliveries with it. Real receivers on 127.0.0.1.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { noStoreAvailable, startGateway, type TestGateway } from '../helpers/gateway.js';
import { sandboxQrText, waitForDevice } from '../helpers/pairing.js';
import { waitFor } from '../helpers/wait.js';
import {
  pairedWithWebhook,
  phoneSends,
  quickWebhooks,
  sendChat,
  receiverPool,
  verified,
  waitForEvent,
} from '../events/helpers.js';

const PHONE_A = '6287711110001';
const PHONE_B = '6287711110002';
const PEER = '6287711119999';

async function pairedWithout(gw: TestGateway, phone: string) {
  const id = (await gw.request('POST', '/devices', { package: 'BUSINESS', name: `plain ${phone}` })).body.data.id;
  const scan = await gw.request('POST', '/sandbox/scan', { qr: await sandboxQrText(gw, id), phone });
  expect(scan.status, JSON.stringify(scan.body)).toBe(200);
  return waitForDevice(gw, id, (d) => d.paired_status === 'PAIRED' && d.connected === true, 'paired and connected');
}

describe.skipIf(noStoreAvailable)('account webhooks: deliveries', () => {
  let gw: TestGateway;
  const receivers = receiverPool();
  const receiver = () => receivers.start();
  beforeAll(async () => {
    gw = await startGateway({
      config: { allowPrivateUrls: true, sendIntervalMs: 0 },
      build: { sandbox: { deliveryDelayMs: 5, readDelayMs: 5 }, webhooks: quickWebhooks },
    });
  });
  afterAll(async () => {
    await gw?.close();
    await receivers.closeAll();
  });

  it('fans out by device and type filters, formats and headers, each signed with its own secret', async () => {
    const own = await receiver();
    const [all, onlyB, incoming, disabled] = [await receiver(), await receiver(), await receiver(), await receiver()];
    const a = await pairedWithWebhook(gw, PHONE_A, own.url);
    const b = await pairedWithout(gw, PHONE_B);
    const create = async (body: Record<string, unknown>) => {
      const res = await gw.request('POST', '/webhooks', body);
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      return res.body.data;
    };
    const hAll = await create({ url: all.url, headers: { Authorization: 'Bearer t-1', 'X-Team': 'crm' } });
    const hB = await create({ url: onlyB.url, devices: [b.id], events: ['message.sent'] });
    const hIn = await create({ url: incoming.url, events: ['message.incoming'], format: 'whatspie_v1' });
    await create({ url: disabled.url, enabled: false });

    const fromA = await sendChat(gw, PHONE_A, PEER, 'from a');
    const fromB = await sendChat(gw, PHONE_B, PEER, 'from b');
    await phoneSends(gw, PEER, PHONE_A, 'to a');
    const readOf = (id: string) => (e: any) => e.data.id === id;
    await waitForEvent(all, 'message.delivered', readOf(fromA));
    await waitForEvent(all, 'message.delivered', readOf(fromB));
    await waitForEvent(all, 'message.incoming');
    await waitForEvent(own, 'message.delivered', readOf(fromA));
    await waitFor(
      () => incoming.received.length,
      (n) => n >= 1,
      { what: 'the incoming message at the v1 webhook' },
    );
    await waitFor(
      () => onlyB.received.length,
      (n) => n >= 1,
      { what: 'B’s message.sent' },
    );

    // The webhook of every device and type: both devices' events, signed with its secret, its headers exact.
    const allEvents = all.received.map((r) => verified(hAll.secret, r));
    expect(new Set(allEvents.map((e) => e.device.id))).toEqual(new Set([a.id, b.id]));
    for (const type of ['message.sent', 'message.delivered', 'message.incoming']) {
      expect(allEvents.map((e) => e.type)).toContain(type);
    }
    for (const r of all.received) {
      expect(r.headers.authorization).toBe('Bearer t-1');
      expect(r.headers['x-team']).toBe('crm');
      expect(r.headers['content-type']).toBe('application/json');
      // The event's id names the delivery at every destination.
      expect(r.headers['webhook-id']).toBe(JSON.parse(r.body).id);
      expect(() => verified(hB.secret, r)).toThrow();
    }
    // The device's own URL gets A's events only, under the same event ids, and no custom header.
    const ownEvents = own.received.map((r) => JSON.parse(r.body));
    expect(new Set(ownEvents.map((e) => e.device.id))).toEqual(new Set([a.id]));
    const sentA = ownEvents.find((e) => e.type === 'message.sent' && e.data.id === fromA);
    expect(allEvents.find((e) => e.type === 'message.sent' && e.data.id === fromA).id).toBe(sentA.id);
    for (const r of own.received) expect(r.headers.authorization).toBeUndefined();
    // Device B and message.sent only (its later events have been delivered elsewhere by now).
    expect(onlyB.received.map((r) => verified(hB.secret, r)).map((e) => [e.type, e.device.id, e.data.id])).toEqual([
      ['message.sent', b.id, fromB],
    ]);
    // Incoming only, in the whatspie_v1 body, still signed.
    expect(incoming.received).toHaveLength(1);
    const v1 = verified(hIn.secret, incoming.received[0]!);
    expect(v1).toMatchObject({ message: 'to a', from: PEER });
    expect(disabled.received).toEqual([]);

    // The logs: the webhook's deliveries are its own; the device's log shows its own URL's only.
    // The outcome is written just after the receiver answered.
    const logB = await waitFor(
      () => gw.request('GET', `/webhooks/${hB.id}/deliveries`),
      (res) => res.body.data?.[0]?.status === 'delivered',
      { what: 'the delivery logged as delivered' },
    );
    expect(logB.status).toBe(200);
    expect(logB.body.meta).toMatchObject({ page: 1, total: 1 });
    const delivery = logB.body.data[0];
    expect(delivery).toMatchObject({ type: 'message.sent', status: 'delivered', url: onlyB.url });
    expect(delivery.id).toMatch(/^dlv_/);
    expect(delivery.attempts).toHaveLength(1);
    expect(delivery.attempts[0]).toMatchObject({ http_status: 200, url: onlyB.url, format: 'standard' });
    const ownLog = await gw.request('GET', `/devices/${a.id}/webhook-deliveries?per_page=100`);
    expect(ownLog.body.meta.total).toBe(own.received.length);
    expect(ownLog.body.data.every((d: any) => d.url === own.url)).toBe(true);

    // A manual retry sends it again, under the same event id and signature key.
    const retried = await gw.request('POST', `/webhooks/${hB.id}/deliveries/${delivery.id}/retry`);
    expect(retried.status, JSON.stringify(retried.body)).toBe(200);
    expect(retried.body).toMatchObject({ code: 200, message: 'Delivery retry scheduled' });
    await waitFor(
      () => onlyB.received.length,
      (n) => n === 2,
      { what: 'the retried delivery' },
    );
    expect(onlyB.received[1]!.headers['webhook-id']).toBe(onlyB.received[0]!.headers['webhook-id']);
    verified(hB.secret, onlyB.received[1]!);
    // A delivery of another webhook is not this one's.
    const foreign = await gw.request('POST', `/webhooks/${hIn.id}/deliveries/${delivery.id}/retry`);
    expect(foreign.status).toBe(404);
    expect(foreign.body.message).toBe('Delivery not found');

    // A change applies to the next event at once: B's webhook now takes incoming messages of every device.
    const patched = await gw.request('PATCH', `/webhooks/${hB.id}`, { devices: null, events: ['message.incoming'] });
    expect(patched.status).toBe(200);
    await phoneSends(gw, PEER, PHONE_A, 'again');
    await waitFor(
      () => onlyB.received.length,
      (n) => n === 3,
      { what: 'the incoming message at the changed webhook' },
    );
    expect(verified(hB.secret, onlyB.received[2]!)).toMatchObject({ type: 'message.incoming', device: { id: a.id } });

    // A rotation: the new secret signs, and the replaced one still does during the overlap.
    const rotated = (await gw.request('POST', `/webhooks/${hB.id}/secret`)).body.data;
    await phoneSends(gw, PEER, PHONE_B, 'after rotation');
    await waitFor(
      () => onlyB.received.length,
      (n) => n === 4,
      { what: 'a delivery after the rotation' },
    );
    expect(verified(rotated.secret, onlyB.received[3]!).type).toBe('message.incoming');
    verified(hB.secret, onlyB.received[3]!);

    // Deleting a webhook ends its waiting deliveries: one recorded but not yet attempted is never sent.
    const { db } = gw.app.store;
    const { account_id } = await db
      .selectFrom('devices')
      .select('account_id')
      .where('id', '=', a.id)
      .executeTakeFirstOrThrow();
    const waiting = await db
      .insertInto('webhook_events')
      .values({
        id: 'dlv_waiting',
        account_id,
        device_id: a.id,
        type: 'message.sent',
        payload: JSON.stringify({ id: 'evt_waiting', type: 'message.sent', device: { id: a.id }, data: {} }),
        url: all.url,
        status: 'pending',
        attempts: 0,
        next_attempt_at: Date.now() + 60_000,
        locked_until: null,
        created_at: Date.now(),
        delivered_at: null,
        failed_at: null,
        webhook_id: hAll.id,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    const deleted = await gw.request('DELETE', `/webhooks/${hAll.id}`);
    expect(deleted.status).toBe(200);
    expect(deleted.body).toMatchObject({ code: 200, message: 'Webhook deleted', data: { id: hAll.id } });
    expect(deleted.body.data).not.toHaveProperty('secret');
    expect((await gw.request('GET', `/webhooks/${hAll.id}/deliveries`)).status).toBe(404);
    const row = await db
      .selectFrom('webhook_events')
      .selectAll()
      .where('id', '=', waiting.id)
      .executeTakeFirstOrThrow();
    expect(row.status).toBe('failed');
    const pending = await db
      .selectFrom('webhook_events')
      .select('id')
      .where('webhook_id', '=', hAll.id)
      .where('status', '=', 'pending')
      .execute();
    expect(pending).toEqual([]);
    // Events after the deletion do not go to it.
    const before = all.received.length;
    await phoneSends(gw, PEER, PHONE_A, 'after deletion');
    await waitForEvent(own, 'message.incoming', (e) => e.data.message === 'after deletion');
    expect(all.received.length).toBe(before);
  });
});
