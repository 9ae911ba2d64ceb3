// The built gateway against the WhatsApp stand-in (docs/standin.md) under the faults of the wire
// (docs/whatsapp.md): a slow media upload must not eat the acknowledgement window, an acknowledgement that comes
// after the window still moves the message to `sent`. Its own gateway, with a short acknowledgement window
// (GATEWAY_WHATSAPP_ACK_TIMEOUT_MS), so the faults stay small. SQLite only (vitest.config.ts).
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../helpers/wait.js';
import { startStandinWorld, WAIT, type StandinWorld } from './standin-harness.js';

const ME = '15552340001';
const FRIEND = '15552340002';
/** The gateway's acknowledgement window here; the faults below are sized against it. */
const ACK_TIMEOUT_MS = 1500;

let world: StandinWorld;
const faults = (body: Record<string, unknown>) => world.standin.call('POST', '/control/faults', body);

beforeAll(async () => {
  world = await startStandinWorld(5);
  await world.startGateway({ GATEWAY_WHATSAPP_ACK_TIMEOUT_MS: String(ACK_TIMEOUT_MS) });
  await world.pairedDevice('wire', ME);
});

afterEach(async () => {
  await faults({});
});

afterAll(async () => {
  await world?.stop();
});

describe('the WhatsApp connector on a faulty wire', () => {
  it('an upload slower than the acknowledgement window: sent once, the wait starting when the stanza left', async () => {
    // The phone's receipt held back, so only the acknowledgement can make the message `sent`.
    await faults({ slow_upload_ms: ACK_TIMEOUT_MS + 1500, receipt_delay_ms: 600_000 });
    const image = await world.api('POST', '/messages', {
      device: ME,
      receiver: FRIEND,
      type: 'image',
      params: { image: { url: world.filesUrl }, caption: 'slow upload' },
    });
    expect(image.status, JSON.stringify(image.body)).toBe(200);
    const sent = await waitFor(
      () => world.message(image.body.data.id),
      (m) => m.status === 'sent',
      { ...WAIT, what: 'sent' },
    );
    expect(sent.failed_reason).toBeNull();
    const copies = (await world.phone(FRIEND)).inbox.filter((m: any) => m.text === 'slow upload');
    expect(copies).toHaveLength(1);
  });

  it('an acknowledgement after the window still moves the message to sent', async () => {
    await faults({ ack_delay_ms: ACK_TIMEOUT_MS + 2000, receipt_delay_ms: 600_000 });
    const text = await world.api('POST', '/messages', {
      device: ME,
      receiver: FRIEND,
      type: 'chat',
      params: { text: 'late ack' },
    });
    expect(text.status, JSON.stringify(text.body)).toBe(200);
    const id = text.body.data.id as string;
    await waitFor(
      () => world.message(id),
      (m) => m.status === 'sent',
      { ...WAIT, what: 'sent after the late acknowledgement' },
    );
    await waitFor(
      () => world.hooks.events().filter((e) => e.type === 'message.sent' && e.data?.id === id),
      (events) => events.length === 1,
      { ...WAIT, what: 'one message.sent' },
    );
  });

  it("a phone's receipt that overtakes the acknowledgement: message.sent is still recorded, once, before message.delivered", async () => {
    // The acknowledgement held back (within the window), the phone's receipt not: the receipt is written first.
    await faults({ ack_delay_ms: ACK_TIMEOUT_MS / 2 });
    const text = await world.api('POST', '/messages', {
      device: ME,
      receiver: FRIEND,
      type: 'chat',
      params: { text: 'receipt first' },
    });
    expect(text.status, JSON.stringify(text.body)).toBe(200);
    const id = text.body.data.id as string;
    const mine = () => world.hooks.events().filter((e) => e.data?.id === id && e.type.startsWith('message.'));
    await waitFor(mine, (events) => events.some((e) => e.type === 'message.delivered'), {
      ...WAIT,
      what: 'message.delivered',
    });
    // The acknowledgement has come by now too (it was due before the receipt's event could be delivered and read).
    await waitFor(
      () => world.message(id),
      (m) => m.sent_at !== null && m.status === 'delivered',
      WAIT,
    );
    await new Promise((resolve) => setTimeout(resolve, ACK_TIMEOUT_MS));
    // Delivered concurrently, so in any order (docs/webhooks.md); recorded in order: event ids grow.
    const recorded = mine().sort((a, b) => (a.id < b.id ? -1 : 1));
    expect(recorded.map((e) => e.type)).toEqual(['message.sent', 'message.delivered']);
    const sent = recorded[0];
    expect(sent.data).toMatchObject({ status: 'sent', delivered_at: null });
  });
});
