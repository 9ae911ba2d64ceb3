// docs/internals.md, Sending: a device's messages leave in the
// order accepted, at most one per send interval (global, or the device's own),
// and `simulate_typing: 1` shows typing for 50 ms a character (1-5 s) first.
// Measured where a user would see it: the receiving phone's inbox.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { noStoreAvailable, startGateway, type TestGateway } from '../helpers/gateway.js';
import { createPairedDevice } from '../helpers/pairing.js';
import { waitFor } from '../helpers/wait.js';

// Phones receive the moment the network takes a message, so arrival times are send times.
const build = {
  sandbox: { deliveryDelayMs: 0, readDelayMs: 5 },
  dispatch: { retryBaseMs: 50, retryMaxMs: 200 },
  connections: { reconnectBaseMs: 20, reconnectMaxMs: 100 },
};

interface InboxEntry {
  message_id: string;
  received_at: string;
  typing_ms?: number;
}

function helpers(gw: () => TestGateway) {
  const send = async (device: string, receiver: string, text: string, extra: Record<string, unknown> = {}) => {
    const res = await gw().request('POST', '/messages', { device, receiver, type: 'chat', params: { text }, ...extra });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.data as { id: string; timestamp: string };
  };
  /** Sends `count` messages at once and answers their ids in acceptance order. */
  const sendBurst = async (device: string, receiver: string, count: number) => {
    const accepted = await Promise.all(Array.from({ length: count }, (_, i) => send(device, receiver, `m${i}`)));
    return accepted.map((m) => m.id).sort();
  };
  const inbox = async (phone: string) =>
    (await gw().request('GET', `/sandbox/phones/${phone}`)).body.data.inbox as InboxEntry[];
  const received = (phone: string, count: number) =>
    waitFor(
      () => inbox(phone).catch(() => [] as InboxEntry[]),
      (entries) => entries.length >= count,
      { what: `${count} messages at ${phone}`, timeoutMs: 10_000 },
    );
  return { send, sendBurst, inbox, received };
}

const gaps = (entries: InboxEntry[]) =>
  entries.slice(1).map((e, i) => Date.parse(e.received_at) - Date.parse(entries[i]!.received_at));
const span = (entries: InboxEntry[]) => Date.parse(entries.at(-1)!.received_at) - Date.parse(entries[0]!.received_at);

/**
 * Pacing is measured where the messages arrive, so a message that reaches its
 * phone late (a busy host) shortens the gap after it and lengthens the one
 * before. The whole span is disturbed only at its two ends; single gaps are
 * held to half the interval, which no unpaced run comes near.
 */
function expectPaced(entries: InboxEntry[], intervalMs: number): void {
  expect(span(entries)).toBeGreaterThanOrEqual((entries.length - 1) * intervalMs - 50);
  for (const gap of gaps(entries)) expect(gap).toBeGreaterThanOrEqual(intervalMs / 2);
}

describe.skipIf(noStoreAvailable)('pacing with a global send interval of 150 ms', () => {
  let gw: TestGateway;
  let sender: string;
  const h = helpers(() => gw);
  beforeAll(async () => {
    gw = await startGateway({ build, config: { sendIntervalMs: 150 } });
    sender = (await createPairedDevice(gw, '6281700005001')).phone;
  });
  afterAll(() => gw?.close());

  it('sends 5 messages accepted at once one per 150 ms, in acceptance order', async () => {
    const receiver = '6281799995001';
    const ids = await h.sendBurst(sender, receiver, 5);
    const entries = await h.received(receiver, 5);
    expect(entries).toHaveLength(5);
    expect(entries.map((e) => e.message_id)).toEqual(ids);
    expectPaced(entries, 150);
  });
});

describe.skipIf(noStoreAvailable)('pacing with a global send interval of 0', () => {
  let gw: TestGateway;
  const h = helpers(() => gw);
  beforeAll(async () => {
    gw = await startGateway({ build, config: { sendIntervalMs: 0 } });
  });
  afterAll(() => gw?.close());

  it('sends a burst as fast as the network takes it', async () => {
    const sender = (await createPairedDevice(gw, '6281700005011')).phone;
    const receiver = '6281799995011';
    const ids = await h.sendBurst(sender, receiver, 5);
    const entries = await h.received(receiver, 5);
    expect(entries.map((e) => e.message_id)).toEqual(ids);
    // Four gaps of even 150 ms would take 600 ms; unpaced, the whole burst takes a few.
    expect(span(entries)).toBeLessThan(400);
  });

  it('a device’s own send_interval_ms wins over the default, and null gives the default back', async () => {
    const device = await createPairedDevice(gw, '6281700005012');
    const patched = await gw.request('PATCH', `/devices/${device.id}`, { send_interval_ms: 300 });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    expect(patched.body.data.send_interval_ms).toBe(300);

    const slow = '6281799995012';
    const ids = await h.sendBurst(device.phone, slow, 4);
    const entries = await h.received(slow, 4);
    expect(entries.map((e) => e.message_id)).toEqual(ids);
    expectPaced(entries, 300);

    // Another device of the same gateway is not slowed down by it.
    const other = (await createPairedDevice(gw, '6281700005013')).phone;
    const otherReceiver = '6281799995013';
    await h.sendBurst(other, otherReceiver, 4);
    const fast = await h.received(otherReceiver, 4);
    expect(span(fast)).toBeLessThan(450); // paced at 300 ms it would take 900

    const reset = await gw.request('PATCH', `/devices/${device.id}`, { send_interval_ms: null });
    expect(reset.body.data.send_interval_ms).toBeNull();
    const again = '6281799995014';
    await h.sendBurst(device.phone, again, 4);
    const unpaced = await h.received(again, 4);
    expect(span(unpaced)).toBeLessThan(450);
  });

  it('simulate_typing: 1 shows typing for 50 ms a character (at least 1 s) before the message; 0 shows none', async () => {
    // Two devices, so the two typed messages run side by side.
    const [a, b] = await Promise.all([
      createPairedDevice(gw, '6281700005021'),
      createPairedDevice(gw, '6281700005022'),
    ]);
    const long = 'x'.repeat(30); // 30 × 50 ms = 1500 ms
    const [short, longer, plain] = await Promise.all([
      h.send(a.phone, '6281799995021', 'hi', { simulate_typing: 1 }),
      h.send(b.phone, '6281799995022', long, { simulate_typing: 1 }),
      h.send(a.phone, '6281799995023', 'no typing', { simulate_typing: 0 }),
    ]);
    const [shortIn] = await h.received('6281799995021', 1);
    const [longIn] = await h.received('6281799995022', 1);
    const [plainIn] = await h.received('6281799995023', 1);

    expect(shortIn).toMatchObject({ message_id: short.id, typing_ms: 1000 });
    expect(longIn).toMatchObject({ message_id: longer.id, typing_ms: 1500 });
    for (const [entry, accepted] of [
      [shortIn!, short],
      [longIn!, longer],
    ] as const) {
      expect(entry.typing_ms).toBeGreaterThanOrEqual(1000);
      expect(entry.typing_ms).toBeLessThanOrEqual(5000);
      expect(Date.parse(entry.received_at) - Date.parse(accepted.timestamp)).toBeGreaterThanOrEqual(entry.typing_ms!);
    }
    expect(plainIn!.message_id).toBe(plain.id);
    expect(plainIn).not.toHaveProperty('typing_ms');
  });
});
