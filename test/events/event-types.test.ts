// docs/internals.md, Webhooks: every event type reaches a real receiver with a Standard Webhooks
// signature the library verifies, with the documented body, exactly once on a
// healthy receiver.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { noStoreAvailable, type TestGateway } from '../helpers/gateway.js';
import { qrText, waitForDevice } from '../helpers/pairing.js';
import { waitFor } from '../helpers/wait.js';
import { adminGroup, addMembers } from '../groups/helpers.js';
import {
  deliveries,
  sendChat,
  startHookedGateway,
  verified,
  waitForEvent,
  type Received,
  type Receiver,
} from './helpers.js';

const PHONE = '6287100000011';

describe.skipIf(noStoreAvailable)('webhook event types', () => {
  let gw: TestGateway;
  let receiver: Receiver;
  let device: any;
  beforeAll(async () => {
    // The pairing window: short enough for the expiry test, long enough to fetch, decode and scan a QR with four
    // test files at once.
    ({ gw, hooks: receiver, device } = await startHookedGateway(PHONE, { config: { pairingWindowS: 3 } }));
  });
  afterAll(async () => {
    await gw?.close();
    await receiver?.close();
  });

  /** Checks the request as a receiver would and answers the verified body. */
  function check(request: Received, type: string, deviceId = device.id, phone = PHONE) {
    const body = verified(device.webhook_secret, request);
    expect(body).toEqual({
      id: expect.stringMatching(/^evt_[0-9A-Z]{26}$/),
      type,
      device: { id: deviceId, phone },
      created_at: expect.any(String),
      data: expect.any(Object),
    });
    expect(request.headers['webhook-id']).toBe(body.id);
    expect(request.headers['content-type']).toBe('application/json');
    expect(request.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+={0,2}$/);
    expect(Math.abs(Number(request.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(10);
    return body;
  }

  it('device.paired', async () => {
    const body = check(await waitForEvent(receiver, 'device.paired'), 'device.paired');
    expect(body.data).toEqual({ paired_status: 'PAIRED', phone: PHONE });
  });

  it('message.sent, message.delivered and message.read, with the message object as data', async () => {
    const id = await sendChat(gw, PHONE, '6287199990011', 'hello receiver');
    const sent = check(await waitForEvent(receiver, 'message.sent', (e) => e.data.id === id), 'message.sent');
    expect(sent.data).toMatchObject({ id, direction: 'outgoing', device: PHONE, receiver: '6287199990011' });
    const delivered = check(
      await waitForEvent(receiver, 'message.delivered', (e) => e.data.id === id),
      'message.delivered',
    );
    expect(delivered.data).toMatchObject({ id, status: 'delivered', delivered_at: expect.any(String) });
    await gw.request('POST', '/sandbox/phones/6287199990011/read', { message_id: id });
    const read = check(await waitForEvent(receiver, 'message.read', (e) => e.data.id === id), 'message.read');
    expect(read.data).toMatchObject({ id, read_at: expect.any(String) });
  });

  it('message.failed', async () => {
    const id = await sendChat(gw, PHONE, '6287199990000', 'nobody there');
    const body = check(await waitForEvent(receiver, 'message.failed', (e) => e.data.id === id), 'message.failed');
    expect(body.data).toMatchObject({ id, status: 'failed', failed_reason: expect.stringMatching(/not registered/) });
  });

  it('message.incoming', async () => {
    const res = await gw.request('POST', '/sandbox/phones/6287199990022/messages', { to: PHONE, text: 'hi gateway' });
    expect(res.status).toBe(200);
    const body = check(await waitForEvent(receiver, 'message.incoming'), 'message.incoming');
    expect(body.data).toMatchObject({
      direction: 'incoming',
      type: 'chat',
      device: PHONE,
      receiver: PHONE,
      sender: '6287199990022',
      message: 'hi gateway',
      status: 'delivered',
    });
  });

  it('group.participants_added', async (ctx) => {
    // Recorded by the groups feature; this test runs once that feature is part of the build.
    if (!gw.app.routeCatalog.some((route) => route.url === '/groups/:group_id/members/add')) ctx.skip();
    const group = await adminGroup(gw, PHONE, 'Webhook group');
    const added = await addMembers(gw, group.id, ['6287199990033']);
    expect(added.status, JSON.stringify(added.body)).toBe(200);
    // The groups feature records this event without ringing the deliverer: the poll finds it.
    const body = check(await waitForEvent(receiver, 'group.participants_added'), 'group.participants_added');
    expect(body.data).toMatchObject({ total_added: 1 });
    expect(String(body.data.group_id)).toBe(String(group.id));
  });

  it('device.qr_expired, for a device whose pairing window ran out', async () => {
    const created = await gw.request('POST', '/devices', { package: 'BETA', name: 'never scanned' });
    const id = created.body.data.id as number;
    await gw.request('PATCH', `/devices/${id}`, { webhook_url: receiver.url });
    await qrText(gw, id);
    await waitForDevice(gw, id, (d) => d.paired_status === 'EXPIRED', 'EXPIRED', 15_000);
    const request = await waitForEvent(receiver, 'device.qr_expired', (e) => e.device.id === id);
    const body = verified(created.body.data.webhook_secret, request);
    expect(body).toMatchObject({ type: 'device.qr_expired', device: { id, phone: null } });
    expect(body.data).toEqual({ paired_status: 'EXPIRED' });
  });

  it('device.disconnected, when the phone logs the device out', async () => {
    await gw.request('POST', `/sandbox/devices/${device.id}/disconnect`, { logout: true });
    const body = check(await waitForEvent(receiver, 'device.disconnected'), 'device.disconnected');
    expect(body.data).toMatchObject({ paired_status: 'UNPAIRED' });
  });

  it('delivers every event exactly once to a healthy receiver, and logs each as delivered', async () => {
    const log = await waitFor(
      () => deliveries(gw, device.id),
      (list) => list.length > 0 && list.every((d) => d.status === 'delivered'),
      { what: 'every delivery delivered' },
    );
    const ids = receiver.received
      .filter((r) => JSON.parse(r.body).device.id === device.id)
      .map((r) => r.headers['webhook-id']);
    expect(new Set(ids).size).toBe(ids.length);
    expect(new Set(ids)).toEqual(new Set(log.map((d) => d.id)));
    for (const delivery of log) {
      expect(delivery.attempts).toHaveLength(1);
      expect(delivery.attempts[0]).toMatchObject({ http_status: 200, error: null, url: receiver.url });
      expect(delivery.payload.id).toBe(delivery.id);
    }
    // Newest first.
    const created = log.map((d) => d.created_at);
    expect([...created].sort().reverse()).toEqual(created);
  });
});
