// The built gateway against the WhatsApp stand-in (docs/standin.md) under the faults of the wire
// (docs/whatsapp.md): a slow media upload must not eat the acknowledgement window, an acknowledgement that comes
// after the window still moves the message to `sent`. Its own gateway, with a short acknowledgement window
// (GATEWAY_WHATSAPP_ACK_TIMEOUT_MS), so the faults stay small. SQLite only (vitest.config.ts).
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { decodeQrDataUrl } from '../helpers/qr.js';
import { waitFor } from '../helpers/wait.js';
import { startStandinWorld, WAIT, type StandinWorld } from './standin-harness.js';

const ME = '15552340001';
const FRIEND = '15552340002';
/** The gateway's acknowledgement window here; the faults below are sized against it. */
const ACK_TIMEOUT_MS = 1500;

let world: StandinWorld;
let deviceId: number;
const faults = (body: Record<string, unknown>) => world.standin.call('POST', '/control/faults', body);

beforeAll(async () => {
  world = await startStandinWorld(5);
  await world.startGateway({ GATEWAY_WHATSAPP_ACK_TIMEOUT_MS: String(ACK_TIMEOUT_MS) });
  const { api } = world;
  const created = await world.api('POST', '/devices', { package: 'BUSINESS', name: 'wire' });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  deviceId = created.body.data.id as number;
  expect((await api('PATCH', `/devices/${deviceId}`, { webhook_url: world.hooks.url })).status).toBe(200);
  const qr = await waitFor(
    () => api('GET', `/devices/${deviceId}/qr?response_type=url`),
    (r) => r.status === 200 && !!r.body.data?.qr,
    { ...WAIT, what: 'a QR code' },
  );
  const scanned = await world.standin.call('POST', '/control/scan', {
    qr: decodeQrDataUrl(qr.body.data.qr),
    phone: ME,
  });
  expect(scanned.status, JSON.stringify(scanned.body)).toBe(200);
  await world.connected(deviceId);
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
});
