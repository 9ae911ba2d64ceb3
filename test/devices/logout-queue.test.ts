// A message accepted for a number is sent from that number or not at all
// (docs/internals.md, Devices and pairing; Sending; issue 10 item 2). A logout, asked through the API or
// done from the phone, ends the queue of that pairing: each queued message
// ends `failed` with `device logged out`, its unit of quota comes back and
// `message.failed` is recorded. When the device is then paired as another
// number, nothing of the old queue reaches any phone from it, also when a
// message escaped the logout's ending (the dispatcher's send-time guard).
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { noStoreAvailable, startGateway, type TestGateway } from '../helpers/gateway.js';
import { createPairedDevice, sandboxQrText, waitForDevice } from '../helpers/pairing.js';
import { waitFor } from '../helpers/wait.js';

interface InboxEntry {
  message_id: string;
  from: string;
}

describe.skipIf(noStoreAvailable)('a logout ends the queue of its pairing', () => {
  let gw: TestGateway;
  beforeEach(async () => {
    // The first message of a burst leaves at once; the rest wait a minute, so they are queued at the logout.
    gw = await startGateway({ config: { sendIntervalMs: 60_000, allowPrivateUrls: true } });
  });
  afterEach(async () => {
    await gw.close();
  });

  const inbox = async (phone: string): Promise<InboxEntry[]> => {
    const res = await gw.request('GET', `/sandbox/phones/${phone}`);
    return res.status === 200 ? (res.body.data.inbox as InboxEntry[]) : [];
  };
  const message = async (id: string) => (await gw.request('GET', `/messages/${id}`)).body.data;

  async function queueAfterFirst(devicePhone: string, receiver: string, count: number): Promise<string[]> {
    const ids: string[] = [];
    // One at a time, so acceptance order is the order of the ids.
    for (let i = 0; i < count; i++) {
      const res = await gw.request('POST', '/messages', {
        device: devicePhone,
        receiver,
        type: 'chat',
        params: { text: `queued ${i}` },
      });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      ids.push(res.body.data.id as string);
    }
    await waitFor(
      () => message(ids[0]!),
      (m) => m.status === 'sent' || m.status === 'delivered',
      { what: 'the first message sent' },
    );
    for (const id of ids.slice(1)) expect((await message(id)).status).toBe('pending');
    return ids;
  }

  async function pairAgain(deviceId: number, phone: string): Promise<void> {
    const scan = await gw.request('POST', '/sandbox/scan', { qr: await sandboxQrText(gw, deviceId), phone });
    expect(scan.status, JSON.stringify(scan.body)).toBe(200);
    await waitForDevice(gw, deviceId, (d) => d.connected === true && d.phone === phone, `paired as ${phone}`);
    // The lane no longer waits a minute: a new message leaves at once, behind whatever is still queued.
    expect((await gw.request('PATCH', `/devices/${deviceId}`, { send_interval_ms: 0 })).status).toBe(200);
  }

  for (const via of ['the API', 'the phone'] as const) {
    it(`logged out from ${via}: queued messages fail with their quota back, and none leaves from the next number`, async () => {
      const first = via === 'the API' ? '6281700000101' : '6281700000201';
      const next = via === 'the API' ? '6281700000102' : '6281700000202';
      const receiver = via === 'the API' ? '6281799990101' : '6281799990201';
      const device = await createPairedDevice(gw, first, { package: 'BETA' });
      const hook = await gw.request('PATCH', `/devices/${device.id}`, { webhook_url: 'http://127.0.0.1:9/hook' });
      expect(hook.status, JSON.stringify(hook.body)).toBe(200);

      const ids = await queueAfterFirst(first, receiver, 4);
      const before = (await gw.request('GET', `/devices/${device.id}`)).body.data;
      expect(before.subscription).toEqual({ quote_available: '246', quote_used: '4' });

      if (via === 'the API') {
        const out = await gw.request('POST', `/devices/${device.id}/logout`);
        expect(out.status).toBe(200);
        expect(out.body.data.paired_status).toBe('UNPAIRED');
      } else {
        const out = await gw.request('POST', `/sandbox/devices/${device.id}/disconnect`, { logout: true });
        expect(out.status, JSON.stringify(out.body)).toBe(200);
        await waitForDevice(gw, device.id, (d) => d.paired_status === 'UNPAIRED', 'logged out from the phone');
      }

      const queued = ids.slice(1);
      for (const id of queued) {
        const m = await waitFor(
          () => message(id),
          (row) => row.status !== 'pending',
          { what: `${id} ended` },
        );
        expect(m).toMatchObject({ status: 'failed', failed_reason: 'device logged out', device: first });
        expect(typeof m.failed_at).toBe('string');
      }
      // Only the message that reached the network keeps its unit.
      const after = (await gw.request('GET', `/devices/${device.id}`)).body.data;
      expect(after.subscription).toEqual({ quote_available: '249', quote_used: '1' });
      const events = await gw.request(
        'GET',
        `/devices/${device.id}/webhook-deliveries?type=message.failed&per_page=100`,
      );
      expect(events.status).toBe(200);
      expect(events.body.data).toHaveLength(queued.length);
      const rows = await gw.app.store.db
        .selectFrom('webhook_events')
        .select(['type', 'payload'])
        .where('device_id', '=', device.id)
        .where('type', '=', 'message.failed')
        .execute();
      const announced = rows.map((r) => JSON.parse(r.payload));
      expect(announced.map((e) => e.data.id).sort()).toEqual([...queued].sort());
      for (const e of announced) {
        expect(e.device).toEqual({ id: device.id, phone: first });
        expect(e.data).toMatchObject({ status: 'failed', failed_reason: 'device logged out', device: first });
      }

      await pairAgain(device.id, next);
      const fresh = await gw.request('POST', '/messages', {
        device: next,
        receiver,
        type: 'chat',
        params: { text: 'from the new number' },
      });
      expect(fresh.status, JSON.stringify(fresh.body)).toBe(200);
      await waitFor(
        () => message(fresh.body.data.id),
        (m) => m.status === 'delivered',
        { what: 'the new number’s message delivered' },
      );
      // FIFO per device: had any of the old queue been left to send, it would have gone before this one.
      expect((await inbox(receiver)).map((e) => [e.message_id, e.from])).toEqual([
        [ids[0], first],
        [fresh.body.data.id, next],
      ]);
      for (const id of queued) expect((await message(id)).status).toBe('failed');
    });
  }

  it('a queued message that escaped the logout is failed at send time, never sent from the new number', async () => {
    const first = '6281700000301';
    const next = '6281700000302';
    const receiver = '6281799990301';
    const device = await createPairedDevice(gw, first, { package: 'BETA' });
    const ids = await queueAfterFirst(first, receiver, 2);
    expect((await gw.request('POST', `/devices/${device.id}/logout`)).status).toBe(200);
    const escaped = ids[1]!;
    // As if it had been accepted in the instant the logout committed, or the process stopped before
    // the logout's ending reached it: pending, holding its unit of quota (beside the first one's).
    await gw.app.store.db
      .updateTable('messages')
      .set({ status: 'pending', failed_at: null, failed_reason: null })
      .where('id', '=', escaped)
      .execute();
    await gw.app.store.db.updateTable('devices').set({ quote_used: 2 }).where('id', '=', device.id).execute();

    await pairAgain(device.id, next);
    const fresh = await gw.request('POST', '/messages', {
      device: next,
      receiver,
      type: 'chat',
      params: { text: 'from the new number' },
    });
    expect(fresh.status).toBe(200);
    await waitFor(
      () => message(fresh.body.data.id),
      (m) => m.status === 'delivered',
      { what: 'the new number’s message delivered' },
    );
    expect(await message(escaped)).toMatchObject({ status: 'failed', failed_reason: 'device logged out' });
    expect((await inbox(receiver)).map((e) => [e.message_id, e.from])).toEqual([
      [ids[0], first],
      [fresh.body.data.id, next],
    ]);
    // The first and the fresh one hold a unit each; the escaped one gave its back.
    const after = (await gw.request('GET', `/devices/${device.id}`)).body.data;
    expect(after.subscription).toEqual({ quote_available: '248', quote_used: '2' });
  });

  it('deleting a device fails its queue (device deleted, quota back) and stops its pending webhook deliveries', async () => {
    const phone = '6281700000401';
    const receiver = '6281799990401';
    const device = await createPairedDevice(gw, phone, { package: 'BETA' });
    expect(
      (await gw.request('PATCH', `/devices/${device.id}`, { webhook_url: 'http://127.0.0.1:9/hook' })).status,
    ).toBe(200);
    const ids = await queueAfterFirst(phone, receiver, 3);
    const pendingBefore = await gw.app.store.db
      .selectFrom('webhook_events')
      .select('id')
      .where('device_id', '=', device.id)
      .where('status', '=', 'pending')
      .execute();
    expect(pendingBefore.length).toBeGreaterThan(0);

    const deleted = await gw.request('DELETE', `/devices/${device.id}`);
    expect(deleted.status).toBe(200);
    for (const id of ids.slice(1)) {
      expect(await message(id)).toMatchObject({ status: 'failed', failed_reason: 'device deleted' });
    }
    const row = await gw.app.store.db
      .selectFrom('devices')
      .select('quote_used')
      .where('id', '=', device.id)
      .executeTakeFirstOrThrow();
    expect(Number(row.quote_used)).toBe(1);
    const pendingAfter = await gw.app.store.db
      .selectFrom('webhook_events')
      .select(['id', 'status'])
      .where('device_id', '=', device.id)
      .where('status', '=', 'pending')
      .execute();
    expect(pendingAfter).toEqual([]);
    // No message.failed events for a device that is gone.
    const failedEvents = await gw.app.store.db
      .selectFrom('webhook_events')
      .select('id')
      .where('device_id', '=', device.id)
      .where('type', '=', 'message.failed')
      .execute();
    expect(failedEvents).toEqual([]);
  });
});
