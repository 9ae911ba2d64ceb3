// DECISIONS 16 (issue 27): the history sync at pairing, end to end through the sandbox. A number's earlier
// conversations (what its devices sent to phones, and what a tester seeded) are offered when it pairs a device: those
// sent within GATEWAY_HISTORY_DAYS days (the boundary in) are stored with `source: "history"`, never announced with
// `message.incoming`, and one `device.history_synced {chats, messages}` says it happened, once per pairing (not on a
// reconnect); with 0 days nothing is stored or announced.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { noStoreAvailable, startGateway, type TestGateway } from '../helpers/gateway.js';
import { createPairedDevice, sandboxQrText, waitForDevice } from '../helpers/pairing.js';
import { waitFor } from '../helpers/wait.js';
import { recordedEvents } from '../events/helpers.js';

const build = { sandbox: { deliveryDelayMs: 5, readDelayMs: 5 } };
const DAY = 86_400_000;
const iso = (ms: number) => new Date(ms).toISOString();

async function eventsOf(gw: TestGateway, deviceId: number, type: string) {
  return (await recordedEvents(gw, deviceId, type)).map((e) => e.data);
}

async function historyRows(gw: TestGateway, deviceId: number) {
  return gw.app.store.db
    .selectFrom('messages')
    .select(['id', 'direction', 'message', 'receiver', 'sender', 'status', 'created_at'])
    .where('device_id', '=', deviceId)
    .where('source', '=', 'history')
    .orderBy('created_at')
    .execute();
}

/** A device with a webhook (events are recorded only then), paired with `phone`. */
async function pairedWithHook(gw: TestGateway, phone: string) {
  const device = await createPairedDevice(gw, phone);
  const hooked = await gw.request('PATCH', `/devices/${device.id}`, { webhook_url: 'https://hooks.example.invalid/h' });
  expect(hooked.status, JSON.stringify(hooked.body)).toBe(200);
  return device as { id: number; phone: string };
}

/** A new device of the account, with a webhook, paired with `phone` (the webhook is set before the scan). */
async function newDeviceFor(gw: TestGateway, phone: string, token?: string) {
  const created = await gw.request('POST', '/devices', { package: 'BUSINESS', name: `history ${phone}` }, token);
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const id = created.body.data.id as number;
  const hook = { webhook_url: 'https://hooks.example.invalid/h' };
  const hooked = await gw.request('PATCH', `/devices/${id}`, hook, token);
  expect(hooked.status, JSON.stringify(hooked.body)).toBe(200);
  const scan = await gw.request('POST', '/sandbox/scan', { qr: await sandboxQrText(gw, id, token), phone }, token);
  expect(scan.status, JSON.stringify(scan.body)).toBe(200);
  await waitFor(
    async () => (await gw.request('GET', `/devices/${id}`, undefined, token)).body.data,
    (d) => d.paired_status === 'PAIRED' && d.connected === true,
    { what: 'paired and connected' },
  );
  return id;
}

describe.skipIf(noStoreAvailable)('history sync at pairing (sandbox)', () => {
  let gw: TestGateway;
  const clock = new ManualClock(Date.now());
  const number = '6283399100001';
  const friend = '6283311100001';
  const earlier = '6283311100002';
  let first: { id: number; phone: string };
  let second: number;
  let sentEarlier: string;

  beforeAll(async () => {
    gw = await startGateway({ build, clock });
    // The number's first device writes to a phone, and is logged out: the world keeps the conversation.
    first = await pairedWithHook(gw, number);
    const sent = await gw.request('POST', '/messages', { device: number, receiver: earlier, message: 'from before' });
    expect(sent.status, JSON.stringify(sent.body)).toBe(200);
    sentEarlier = sent.body.data.id as string;
    await waitFor(
      async () => (await gw.request('GET', `/messages/${sentEarlier}`)).body.data.status,
      (status) => status === 'delivered',
      { what: 'the earlier message delivered' },
    );
    const out = await gw.request('POST', `/devices/${first.id}/logout`);
    expect(out.status, JSON.stringify(out.body)).toBe(200);
    await waitForDevice(gw, first.id, (d) => d.paired_status !== 'PAIRED', 'logged out');
    // A tester seeds the friend's conversation with the number: at the 7-day boundary, just beyond it, and recent.
    const now = clock.now();
    const seeded = await gw.request('POST', `/sandbox/phones/${friend}/history`, {
      to: number,
      messages: [
        { text: 'beyond the limit', at: iso(now - 7 * DAY - 1) },
        { text: 'at the limit', at: iso(now - 7 * DAY) },
        { text: 'my answer', from_me: true, at: iso(now - 3 * DAY) },
        { text: 'recent', at: iso(now - 60_000) },
      ],
    });
    expect(seeded.status, JSON.stringify(seeded.body)).toBe(200);
    expect(seeded.body).toMatchObject({ message: 'History seeded', data: { seeded: 4 } });
    second = await newDeviceFor(gw, number);
  });
  afterAll(() => gw?.close());

  it('stores the history within the days limit, the boundary in, with source "history"', async () => {
    const synced = await waitFor(
      () => eventsOf(gw, second, 'device.history_synced'),
      (events) => events.length > 0,
      { what: 'device.history_synced' },
    );
    expect(synced).toEqual([{ chats: 2, messages: 4 }]);
    const rows = await historyRows(gw, second);
    expect(rows.map((r) => r.message)).toEqual(['at the limit', 'my answer', 'recent', 'from before']);
    const now = clock.now();
    expect(rows[0]).toMatchObject({
      direction: 'incoming',
      sender: friend,
      receiver: number,
      status: 'delivered',
      created_at: now - 7 * DAY,
    });
    expect(rows[1]).toMatchObject({ direction: 'outgoing', sender: null, receiver: friend, status: 'sent' });
    // Sent live by the first device after this clock's time was set: the last.
    expect(rows[3]).toMatchObject({ direction: 'outgoing', receiver: earlier, status: 'sent' });
  });

  it('shows source "history" in the message object, and leaves it out of live messages', async () => {
    const [row] = await historyRows(gw, second);
    const shown = await gw.request('GET', `/messages/${row!.id}`);
    expect(shown.status).toBe(200);
    expect(shown.body.data).toMatchObject({
      id: row!.id,
      source: 'history',
      direction: 'incoming',
      type: 'chat',
      message: 'at the limit',
      sender: friend,
      timestamp: iso(clock.now() - 7 * DAY),
      sent_at: iso(clock.now() - 7 * DAY),
    });
    const live = await gw.request('GET', `/messages/${sentEarlier}`);
    expect(live.body.data).not.toHaveProperty('source');
  });

  it('raises no message.incoming for history, and the first device got no history (it had none)', async () => {
    expect(await eventsOf(gw, second, 'message.incoming')).toEqual([]);
    expect(await historyRows(gw, first.id)).toEqual([]);
    expect(await eventsOf(gw, first.id, 'device.history_synced')).toEqual([]);
  });

  it('announces the sync once per pairing: a reconnect neither stores nor announces it again', async () => {
    const before = (await historyRows(gw, second)).length;
    const dropped = await gw.request('POST', `/sandbox/devices/${second}/disconnect`, {});
    expect(dropped.status, JSON.stringify(dropped.body)).toBe(200);
    await waitForDevice(gw, second, (d) => d.connected === false, 'dropped', 5_000);
    await waitForDevice(gw, second, (d) => d.connected === true, 'reconnected', 10_000);
    // A live message after the reconnect lands behind anything the reconnect could have brought.
    const live = await gw.request('POST', `/sandbox/phones/${friend}/messages`, { to: number, text: 'live again' });
    expect(live.status, JSON.stringify(live.body)).toBe(200);
    await waitFor(
      () => eventsOf(gw, second, 'message.incoming'),
      (events) => events.length === 1,
      { what: 'the live message.incoming' },
    );
    expect((await historyRows(gw, second)).length).toBe(before);
    expect(await eventsOf(gw, second, 'device.history_synced')).toHaveLength(1);
  });

  it('offers a seeded history only in the seeding account: another account pairing the number gets none', async () => {
    const account = await gw.app.services.accounts.createAccount('acme');
    const other = (await gw.app.services.accounts.createToken(account.id, 'acme')).token;
    const id = await newDeviceFor(gw, number, other);
    const live = await gw.request('POST', `/sandbox/phones/${friend}/messages`, { to: number, text: 'to acme' }, other);
    expect(live.status, JSON.stringify(live.body)).toBe(200);
    await waitFor(
      () => eventsOf(gw, id, 'message.incoming'),
      (events) => events.length === 1,
      { what: 'the live message.incoming' },
    );
    expect(await historyRows(gw, id)).toEqual([]);
    expect(await eventsOf(gw, id, 'device.history_synced')).toEqual([]);
  });

  it('refuses a malformed seed with the contract envelope', async () => {
    const none = await gw.request('POST', `/sandbox/phones/${friend}/history`, { to: number, messages: [] });
    expect(none.status).toBe(400);
    expect(none.body).toMatchObject({ code: 400 });
    const badTo = await gw.request('POST', `/sandbox/phones/${friend}/history`, {
      to: 'nope',
      messages: [{ text: 'x' }],
    });
    expect(badTo.status).toBe(400);
    const tooMany = await gw.request('POST', `/sandbox/phones/${friend}/history`, {
      to: number,
      messages: Array.from({ length: 1001 }, () => ({ text: 'x' })),
    });
    expect(tooMany.status).toBe(400);
    const badPhone = await gw.request('POST', `/sandbox/phones/12/history`, { to: number, messages: [{ text: 'x' }] });
    expect(badPhone.status).toBe(400);
    expect(badPhone.body.message).toBe('Invalid phone number format');
  });
});

describe.skipIf(noStoreAvailable)('history sync with GATEWAY_HISTORY_DAYS=0', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway({ build, config: { historyDays: 0 } });
  });
  afterAll(() => gw?.close());

  it('stores no history and announces none', async () => {
    const number = '6283399100002';
    const seeded = await gw.request('POST', `/sandbox/phones/6283311100003/history`, {
      to: number,
      messages: [{ text: 'recent', at: iso(Date.now() - 60_000) }],
    });
    expect(seeded.status).toBe(200);
    const id = await newDeviceFor(gw, number);
    // A live message after the pairing is stored behind the history batch the sandbox offered first.
    const live = await gw.request('POST', `/sandbox/phones/6283311100003/messages`, { to: number, text: 'live' });
    expect(live.status, JSON.stringify(live.body)).toBe(200);
    await waitFor(
      () => eventsOf(gw, id, 'message.incoming'),
      (events) => events.length === 1,
      { what: 'the live message.incoming' },
    );
    expect(await historyRows(gw, id)).toEqual([]);
    expect(await eventsOf(gw, id, 'device.history_synced')).toEqual([]);
  });
});
