// DECISIONS 16: incoming calls end to end through the sandbox: a phone calls a device, the gateway records
// `call.incoming`; a device set to `reject_calls` rejects it on the network (the calling phone sees it declined) and
// answers the caller with `reject_calls_message` through the durable queue; and the settings' bad input.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { noStoreAvailable, startGateway, type TestGateway } from '../helpers/gateway.js';
import { createPairedDevice } from '../helpers/pairing.js';
import { waitFor } from '../helpers/wait.js';

const build = { sandbox: { deliveryDelayMs: 5, readDelayMs: 5 } };

describe.skipIf(noStoreAvailable)('incoming calls', () => {
  let gw: TestGateway;
  let device: { id: number; phone: string };
  beforeAll(async () => {
    gw = await startGateway({ build });
    device = await createPairedDevice(gw, '6283299000001');
    const hooked = await gw.request('PATCH', `/devices/${device.id}`, {
      webhook_url: 'https://hooks.example.invalid/gateway',
    });
    expect(hooked.status).toBe(200);
  });
  afterAll(() => gw?.close());

  const callEvents = async () => {
    const rows = await gw.app.store.db
      .selectFrom('webhook_events')
      .select(['payload'])
      .where('device_id', '=', device.id)
      .where('type', '=', 'call.incoming')
      .orderBy('id')
      .execute();
    return rows.map((row) => JSON.parse(row.payload).data as Record<string, unknown>);
  };
  const call = (phone: string, body: Record<string, unknown>) =>
    gw.request('POST', `/sandbox/phones/${phone}/calls`, body);
  const phoneCalls = async (phone: string) => (await gw.request('GET', `/sandbox/phones/${phone}`)).body.data.calls;

  it('a device shows reject_calls false and no message until set', async () => {
    const shown = (await gw.request('GET', `/devices/${device.id}`)).body.data;
    expect(shown).toMatchObject({ reject_calls: false, reject_calls_message: null });
  });

  it('announces a call as call.incoming and leaves it ringing when the device does not reject calls', async () => {
    const caller = '6283211000001';
    const res = await call(caller, { to: device.phone });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.message).toBe('Calling');
    expect(res.body.data).toMatchObject({ to: device.phone, video: false, status: 'ringing' });
    const callId = res.body.data.id as string;
    const events = await waitFor(callEvents, (all) => all.some((e) => e.call_id === callId), {
      what: 'call.incoming',
    });
    expect(events.find((e) => e.call_id === callId)).toEqual({
      call_id: callId,
      from: caller,
      video: false,
      group: null,
      rejected: false,
    });
    expect(await phoneCalls(caller)).toEqual([expect.objectContaining({ id: callId, status: 'ringing' })]);
  });

  it('rejects calls when set, tells the caller, and answers with the message once, as a message of the device', async () => {
    const patched = await gw.request('PATCH', `/devices/${device.id}`, {
      reject_calls: true,
      reject_calls_message: 'We do not take calls here; please write.',
    });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    expect(patched.body.data).toMatchObject({
      reject_calls: true,
      reject_calls_message: 'We do not take calls here; please write.',
    });

    const caller = '6283211000002';
    const res = await call(caller, { to: device.phone, video: true });
    expect(res.status).toBe(200);
    const callId = res.body.data.id as string;
    await waitFor(
      () => phoneCalls(caller),
      (calls: Array<{ status: string }>) => calls[0]?.status === 'rejected',
      { what: 'the call rejected on the network' },
    );
    const events = await waitFor(callEvents, (all) => all.some((e) => e.call_id === callId), {
      what: 'call.incoming',
    });
    expect(events.find((e) => e.call_id === callId)).toMatchObject({ from: caller, video: true, rejected: true });

    // The answer goes through the durable queue and reaches the caller.
    const inbox = await waitFor(
      async () => (await gw.request('GET', `/sandbox/phones/${caller}`)).body.data.inbox,
      (entries: Array<{ text?: string }>) => entries.length > 0,
      { what: 'the answer in the caller’s inbox' },
    );
    expect(inbox).toEqual([
      expect.objectContaining({
        from: device.phone,
        type: 'chat',
        content: { text: 'We do not take calls here; please write.' },
      }),
    ]);
    const sent = (await gw.request('GET', `/messages?device=${device.phone}&per_page=100`)).body.data.filter(
      (m: { receiver: string; direction: string }) => m.receiver === caller && m.direction === 'outgoing',
    );
    expect(sent).toHaveLength(1);
  });

  it('a group call says its group; an empty message means none is sent', async () => {
    const cleared = await gw.request('PATCH', `/devices/${device.id}`, { reject_calls_message: '' });
    expect(cleared.body.data.reject_calls_message).toBeNull();
    const caller = '6283211000003';
    const res = await call(caller, { to: device.phone, group_id: '120363000000000777@g.us' });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const callId = res.body.data.id as string;
    const events = await waitFor(callEvents, (all) => all.some((e) => e.call_id === callId), {
      what: 'call.incoming',
    });
    expect(events.find((e) => e.call_id === callId)).toMatchObject({
      group: '120363000000000777@g.us',
      rejected: true,
    });
    await waitFor(
      () => phoneCalls(caller),
      (calls: Array<{ status: string }>) => calls[0]?.status === 'rejected',
      { what: 'the call rejected' },
    );
    expect((await gw.request('GET', `/sandbox/phones/${caller}`)).body.data.inbox).toEqual([]);
  });

  it('refuses bad settings with 400 naming the field, and changes nothing', async () => {
    for (const body of [
      { reject_calls: 'yes' },
      { reject_calls: 1 },
      { reject_calls_message: 'x'.repeat(4097) },
      { reject_calls_message: 42 },
    ]) {
      const res = await gw.request('PATCH', `/devices/${device.id}`, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.message).toBe('Validation failed');
      expect(Object.keys(res.body.errors)).toEqual([Object.keys(body)[0]]);
    }
    expect((await gw.request('GET', `/devices/${device.id}`)).body.data.reject_calls).toBe(true);
  });

  it('the sandbox refuses a call to an unknown or logged-out device (404) and malformed calls (400)', async () => {
    expect((await call('6283211000004', { to: '6283299999999' })).status).toBe(404);
    expect((await call('6283211000004', { to: device.phone, video: 'yes' })).status).toBe(400);
    expect((await call('6283211000004', { to: device.phone, group_id: 'nope' })).status).toBe(400);
    expect((await call('6283211000004', { to: 'abc' })).status).toBe(400);

    const offline = await createPairedDevice(gw, '6283299000002');
    const dropped = await gw.request('POST', `/sandbox/devices/${offline.id}/disconnect`, { logout: true });
    expect(dropped.status, JSON.stringify(dropped.body)).toBe(200);
    const res = await call('6283211000004', { to: offline.phone });
    expect(res.status).toBe(404);
    expect(res.body.message).toBe('Device not found');
  });
});
