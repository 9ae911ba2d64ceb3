// The built gateway against the WhatsApp stand-in (docs/standin.md), for what the wire does besides ack timing
// (whatsapp-wire.test.ts): broadcast lists and status updates from a phone, a QR scanned by the wrong phone,
// acknowledgements dropped and receipts delayed, and a network that asks for a restart at every login. Its own
// gateway with a short acknowledgement window. SQLite only (vitest.config.ts).
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/store.js';
import { decodeQrDataUrl } from '../helpers/qr.js';
import { waitFor } from '../helpers/wait.js';
import { startStandinWorld, WAIT, type StandinWorld } from './standin-harness.js';

const ME = '15552350001';
const FRIEND = '15552350002';
const STRANGER = '15552350003';
const ACK_TIMEOUT_MS = 1500;

let world: StandinWorld;
let deviceId: number;
const faults = (body: Record<string, unknown>) => world.standin.call('POST', '/control/faults', body);

/** Creates a device (for `phone` when given), asks for its QR and has `scanner` scan it; answers the device id. */
async function scanned(scanner: string, phone?: string): Promise<number> {
  const { api } = world;
  const created = await api('POST', '/devices', {
    package: 'BUSINESS',
    name: `wire-2 ${scanner}`,
    ...(phone === undefined ? {} : { phone }),
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const id = created.body.data.id as number;
  expect((await api('PATCH', `/devices/${id}`, { webhook_url: world.hooks.url })).status).toBe(200);
  const qr = await waitFor(
    () => api('GET', `/devices/${id}/qr?response_type=url`),
    (r) => r.status === 200 && !!r.body.data?.qr,
    { ...WAIT, what: 'a QR code' },
  );
  const scan = await world.standin.call('POST', '/control/scan', {
    qr: decodeQrDataUrl(qr.body.data.qr),
    phone: scanner,
  });
  expect(scan.status, JSON.stringify(scan.body)).toBe(200);
  return id;
}

/** Sends `text` from the paired device to FRIEND; answers the message id. */
async function chatToFriend(text: string): Promise<string> {
  const sent = await world.api('POST', '/messages', { device: ME, receiver: FRIEND, type: 'chat', params: { text } });
  expect(sent.status, JSON.stringify(sent.body)).toBe(200);
  return sent.body.data.id as string;
}

/** The `message.incoming` events received so far. */
const incoming = () => world.hooks.events().filter((e) => e.type === 'message.incoming');

beforeAll(async () => {
  world = await startStandinWorld(6);
  await world.startGateway({ GATEWAY_WHATSAPP_ACK_TIMEOUT_MS: String(ACK_TIMEOUT_MS) });
  deviceId = await scanned(ME);
  await world.connected(deviceId);
});

afterEach(async () => {
  await faults({});
});

afterAll(async () => {
  await world?.stop();
});

describe('broadcast lists and status updates through the stand-in', () => {
  it('a broadcast-list message arrives as an ordinary incoming message, receipted, not refused', async () => {
    const sent = await world.standin.call('POST', `/control/phones/${FRIEND}/messages`, {
      to: ME,
      text: 'to my list',
      broadcast: true,
    });
    expect(sent.status, JSON.stringify(sent.body)).toBe(200);
    const event = await waitFor(
      () => incoming().find((e) => e.data?.message === 'to my list'),
      (e) => e !== undefined,
      { ...WAIT, what: 'the broadcast-list message as message.incoming' },
    );
    expect(event.data).toMatchObject({ direction: 'incoming', device: ME, sender: FRIEND, type: 'chat' });
    expect(event.data.group ?? null).toBeNull();
    const entry = await waitFor(
      async () => (await world.phone(FRIEND)).sent.find((s: any) => s.id === sent.body.id),
      (s) => s?.delivered_at !== undefined,
      { ...WAIT, what: "the device's delivery receipt on the phone" },
    );
    expect(entry.nack).toBeUndefined();
  });

  it('a status update is not a message to the device, and is not refused either', async () => {
    const status = await world.standin.call('POST', `/control/phones/${FRIEND}/messages`, {
      to: ME,
      text: 'my status',
      status: true,
    });
    expect(status.status, JSON.stringify(status.body)).toBe(200);
    // A message sent after it, from the same phone, arrives: by then the status was handled.
    await world.standin.call('POST', `/control/phones/${FRIEND}/messages`, { to: ME, text: 'after the status' });
    await waitFor(
      () => incoming().find((e) => e.data?.message === 'after the status'),
      (e) => e !== undefined,
      { ...WAIT, what: 'the message after the status' },
    );
    expect(incoming().filter((e) => e.data?.message === 'my status')).toEqual([]);
    const entry = (await world.phone(FRIEND)).sent.find((s: any) => s.id === status.body.id);
    expect(entry).toBeDefined();
    expect(entry.nack).toBeUndefined();
  });
});

describe('a QR scanned by the wrong phone, through the stand-in', () => {
  it('unlinks that phone, deletes the session state, and leaves the device UNPAIRED with the reason', async () => {
    const id = await scanned(STRANGER, '15552350009');
    const told = await waitFor(
      async () => world.hooks.events().find((e) => e.type === 'device.disconnected' && e.device?.id === id),
      (e) => e !== undefined,
      { ...WAIT, what: 'device.disconnected for the refused pairing' },
    );
    expect(told.data).toMatchObject({
      paired_status: 'UNPAIRED',
      reason: 'pairing refused: another number scanned the QR',
    });
    expect(world.hooks.events().some((e) => e.type === 'device.paired' && e.device?.id === id)).toBe(false);
    expect(await world.device(id)).toMatchObject({ paired_status: 'UNPAIRED', connected: false });
    // The phone no longer lists the gateway among its linked devices.
    await waitFor(
      () => world.phone(STRANGER),
      (p) => p.linked_devices.length === 0,
      { ...WAIT, what: "the stranger's phone without linked devices" },
    );
    // No stored session is left but the one of the device paired before.
    const store = openStore({ databaseUrl: world.location.databaseUrl, dataDir: world.location.dataDir });
    try {
      const sessions = async () => {
        const auth = await store.db.selectFrom('network_auth').select('session_id').execute();
        const keys = await store.db.selectFrom('network_auth_keys').select('session_id').distinct().execute();
        return new Set([...auth, ...keys].map((r) => r.session_id));
      };
      const paired = (
        await store.db
          .selectFrom('devices')
          .select('network_session')
          .where('id', '=', deviceId)
          .executeTakeFirstOrThrow()
      ).network_session;
      await waitFor(sessions, (s) => s.size === 1 && s.has(paired!), {
        ...WAIT,
        what: 'only the paired session stored',
      });
    } finally {
      await store.close();
    }
  });
});

describe('acknowledgements dropped, receipts delayed', () => {
  it('a delayed delivery receipt still moves the message to delivered, and a read receipt to read', async () => {
    await faults({ receipt_delay_ms: 1500 });
    const id = await chatToFriend('receipt later');
    // Acknowledged by the server at once: sent, and not yet delivered while the receipt is held back.
    const first = await waitFor(
      () => world.message(id),
      (m) => m.status !== 'pending',
      { ...WAIT, what: 'sent' },
    );
    expect(first.status).toBe('sent');
    const delivered = await waitFor(
      () => world.message(id),
      (m) => m.status === 'delivered',
      { ...WAIT, what: 'delivered after the delayed receipt' },
    );
    expect(delivered.delivered_at).not.toBeNull();
    const onPhone = (await world.phone(FRIEND)).inbox.find((m: any) => m.text === 'receipt later');
    expect(
      (await world.standin.call('POST', `/control/phones/${FRIEND}/read`, { message_id: onPhone.id })).status,
    ).toBe(200);
    const read = await waitFor(
      () => world.message(id),
      (m) => m.read_at !== null && m.read_at !== undefined,
      { ...WAIT, what: 'read after the delayed read receipt' },
    );
    expect(read.failed_reason).toBeNull();
  });

  it('acknowledgements dropped: retried under the same id, never as a second message, sent once acked', async () => {
    // No acknowledgement and no receipt: only the acknowledgement window can decide.
    await faults({ drop_acks: true, receipt_delay_ms: 600_000 });
    const id = await chatToFriend('no ack');
    const copies = () => world.phone(FRIEND).then((p) => p.inbox.filter((m: any) => m.text === 'no ack'));
    // The window ran out and the send was made again: the phone got it twice, under the one id.
    const twice = await waitFor(copies, (c) => c.length >= 2, { ...WAIT, what: 'the retry after the window' });
    expect(new Set(twice.map((m: any) => m.id)).size).toBe(1);
    const meanwhile = await world.message(id);
    expect(meanwhile).toMatchObject({ status: 'pending', failed_reason: null });
    // Acknowledged again: the next attempt is taken, and the message is sent, still under that id.
    await faults({ receipt_delay_ms: 600_000 });
    await waitFor(
      () => world.message(id),
      (m) => m.status === 'sent',
      { ...WAIT, what: 'sent once acknowledged' },
    );
    expect(new Set((await copies()).map((m: any) => m.id)).size).toBe(1);
  });
});

describe('a network that asks for a restart at every login', () => {
  it('is followed a few times, then the device is dropped and reconnects with backoff, not in a loop', async () => {
    const logins = async () => (await world.standin.call('GET', '/control/stats')).body.logins as number;
    /** The connector's warnings that it stopped following the restarts, so far. */
    const capped = () =>
      (world.gateway!.output().match(/"msg":"the network asked for a restart more than 3 times within 60 s;/g) ?? [])
        .length;
    const before = await logins();
    const cappedBefore = capped();
    await faults({ restart_loop: true });
    expect((await world.standin.call('POST', '/control/drop', {})).status).toBe(200);
    await waitFor(
      async () => capped() - cappedBefore,
      (n) => n >= 2,
      { ...WAIT, what: 'two runs of restarts capped' },
    );
    // Each run is one login and three restarts followed; a third run may have begun since.
    const made = (await logins()) - before;
    expect(made).toBeGreaterThanOrEqual(8);
    expect(made).toBeLessThanOrEqual(12);
    expect(await world.device(deviceId)).toMatchObject({ paired_status: 'PAIRED', connected: false });
    // Each capped run is a drop: the gateway backs off further each time (attempt 2, 3, ... in its log).
    const attempts = [...world.gateway!.output().matchAll(/"attempt":(\d+),"reconnectInMs"/g)].map((m) => Number(m[1]));
    expect(attempts.slice(-2)).toEqual([attempts.at(-1)! - 1, attempts.at(-1)!]);
    await faults({});
    await world.connected(deviceId);
  });
});
