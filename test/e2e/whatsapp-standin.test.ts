// The built gateway, as its own process, on the whatsapp network with the pinned library, against the WhatsApp
// stand-in (standin/, docs/standin.md): pairing by QR and by code, text and image to a phone (the same bytes
// decrypted there), delivered and read receipts, a phone's message as an incoming webhook with the gateway's
// delivery receipt, a phone's group both ways, a restart that resumes the session, and an unlink from the phone.
// SQLite only (vitest.config.ts): the store is not what this tests.
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeQrDataUrl } from '../helpers/qr.js';
import { waitFor } from '../helpers/wait.js';
import { PNG, startStandinWorld, WAIT, type StandinWorld } from './standin-harness.js';

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const BY_QR = '15551230001';
const BY_CODE = '15551230002';
const FRIEND = '15551230003';
const MEMBER = '15551230004';

let world: StandinWorld;
let standin: StandinWorld['standin'];
let hooks: StandinWorld['hooks'];
const api: StandinWorld['api'] = (...args) => world.api(...args);
const device = (id: number) => world.device(id);
const phone = (number: string) => world.phone(number);
const message = (id: string) => world.message(id);
const connected = (id: number) => world.connected(id);

async function newDevice(name: string): Promise<number> {
  const created = await api('POST', '/devices', { package: 'BUSINESS', name });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const id = created.body.data.id as number;
  const patched = await api('PATCH', `/devices/${id}`, { webhook_url: hooks.url });
  expect(patched.status, JSON.stringify(patched.body)).toBe(200);
  return id;
}

let qrDevice: number;

beforeAll(async () => {
  world = await startStandinWorld(3);
  ({ standin, hooks } = world);
  await world.startGateway();
});

afterAll(async () => {
  await world?.stop();
});

describe('the built gateway against the WhatsApp stand-in', () => {
  it('pairs by QR: the QR image decodes to a code the phone scans, and the device is PAIRED', async () => {
    qrDevice = await newDevice('by QR');
    const qr = await waitFor(
      () => api('GET', `/devices/${qrDevice}/qr?response_type=url`),
      (r) => r.status === 200 && !!r.body.data?.qr,
      {
        ...WAIT,
        what: 'a QR code',
      },
    );
    const scanned = await standin.call('POST', '/control/scan', { qr: decodeQrDataUrl(qr.body.data.qr), phone: BY_QR });
    expect(scanned.status, JSON.stringify(scanned.body)).toBe(200);
    expect((await connected(qrDevice)).phone).toBe(BY_QR);
    expect((await phone(BY_QR)).linked_devices).toHaveLength(1);
  });

  it('pairs by code: the phone types the code the gateway shows', async () => {
    const id = await newDevice('by code');
    const code = await waitFor(
      () => api('POST', `/devices/${id}/pairing-code`, { phone: BY_CODE }),
      (r) => r.status === 200,
      {
        ...WAIT,
        what: 'a pairing code',
      },
    );
    const typed = await standin.call('POST', '/control/pair', { code: code.body.data.pairing_code, phone: BY_CODE });
    expect(typed.status, JSON.stringify(typed.body)).toBe(200);
    expect((await connected(id)).phone).toBe(BY_CODE);
  });

  it('sends a text and an image the phone decrypts (same bytes), and receipts move the status to delivered and read', async () => {
    const text = await api('POST', '/messages', {
      device: BY_QR,
      receiver: FRIEND,
      type: 'chat',
      params: { text: 'hello from the gateway' },
    });
    expect(text.status, JSON.stringify(text.body)).toBe(200);
    const image = await api('POST', '/messages', {
      device: BY_QR,
      receiver: FRIEND,
      type: 'image',
      params: { image: { url: world.filesUrl }, caption: 'a picture' },
    });
    expect(image.status, JSON.stringify(image.body)).toBe(200);
    const inbox = await waitFor(
      () => phone(FRIEND),
      (p) => p.inbox?.length >= 2,
      { ...WAIT, what: 'the phone to receive both' },
    );
    expect(inbox.inbox.find((m: any) => m.type === 'text')).toMatchObject({
      from: BY_QR,
      text: 'hello from the gateway',
    });
    expect(inbox.inbox.find((m: any) => m.type === 'image')).toMatchObject({
      from: BY_QR,
      text: 'a picture',
      media_sha256: sha(PNG),
    });
    const delivered = await waitFor(
      () => message(text.body.data.id),
      (m) => m.status === 'delivered',
      { ...WAIT, what: 'delivered' },
    );
    expect(delivered.read_at).toBeNull();
    const networkId = inbox.inbox.find((m: any) => m.type === 'text').id as string;
    expect((await standin.call('POST', `/control/phones/${FRIEND}/read`, { message_id: networkId })).status).toBe(200);
    const read = await waitFor(
      () => message(text.body.data.id),
      (m) => m.read_at !== null,
      { ...WAIT, what: 'read' },
    );
    expect(read.delivered_at).not.toBeNull();
  });

  it("delivers a phone's message as message.incoming and acknowledges it to the phone", async () => {
    const sent = await standin.call('POST', `/control/phones/${FRIEND}/messages`, { to: BY_QR, text: 'hi gateway' });
    expect(sent.status).toBe(200);
    const event = await waitFor(
      () => hooks.events().find((e) => e.type === 'message.incoming' && e.data?.message === 'hi gateway'),
      (e) => e !== undefined,
      { ...WAIT, what: 'the incoming webhook' },
    );
    expect(event.data).toMatchObject({ direction: 'incoming', device: BY_QR, sender: FRIEND, type: 'chat' });
    const acknowledged = await waitFor(
      async () => (await phone(FRIEND)).sent.find((s: any) => s.id === sent.body.id),
      (s) => s?.delivered_at !== undefined,
      { ...WAIT, what: 'the delivery receipt at the phone' },
    );
    expect(acknowledged.to).toBe(BY_QR);
  });

  it('sends to and receives from a group a phone created', async () => {
    const { body } = await standin.call('POST', '/control/groups', {
      subject: 'Stand-in team',
      members: [FRIEND, BY_QR, MEMBER],
    });
    const group = await waitFor(
      async () =>
        ((await api('GET', `/groups?device=${BY_QR}&per_page=100`)).body.data as any[]).find(
          (g) => g.network_id === body.id,
        ),
      (g) => g !== undefined,
      { ...WAIT, what: 'the group synced' },
    );
    expect(group).toMatchObject({ subject: 'Stand-in team', participant_count: 3 });
    const sent = await api('POST', `/groups/${group.id}/send`, { type: 'chat', params: { text: 'hello group' } });
    expect(sent.status, JSON.stringify(sent.body)).toBe(200);
    for (const member of [FRIEND, MEMBER])
      await waitFor(
        () => phone(member),
        (p) => p.inbox.some((m: any) => m.group === body.id && m.text === 'hello group'),
        {
          ...WAIT,
          what: `${member} to receive the group message`,
        },
      );
    await standin.call('POST', `/control/phones/${MEMBER}/messages`, { to: body.id, text: 'hello back' });
    const event = await waitFor(
      () => hooks.events().find((e) => e.type === 'message.incoming' && e.data?.message === 'hello back'),
      (e) => e !== undefined,
      { ...WAIT, what: 'the group message as an incoming webhook' },
    );
    expect(event.data).toMatchObject({ direction: 'incoming', device: BY_QR, sender: MEMBER });
  });

  it('resumes the session after a restart, without pairing again', async () => {
    const before = (await standin.call('GET', '/control/stats')).body.logins;
    await world.gateway?.stop();
    await world.startGateway();
    await connected(qrDevice);
    expect((await standin.call('GET', '/control/stats')).body.logins).toBeGreaterThan(before);
    expect((await phone(BY_QR)).linked_devices).toHaveLength(1);
    const text = await api('POST', '/messages', {
      device: BY_QR,
      receiver: FRIEND,
      type: 'chat',
      params: { text: 'after the restart' },
    });
    expect(text.status, JSON.stringify(text.body)).toBe(200);
    await waitFor(
      () => phone(FRIEND),
      (p) => p.inbox.some((m: any) => m.text === 'after the restart'),
      { ...WAIT, what: 'the message after the restart' },
    );
  });

  it('marks the device UNPAIRED when the phone unlinks it', async () => {
    expect((await standin.call('POST', `/control/phones/${BY_QR}/unlink`, {})).body).toEqual({ unlinked: 1 });
    const unpaired = await waitFor(
      () => device(qrDevice),
      (d) => d.paired_status === 'UNPAIRED',
      { ...WAIT, what: 'UNPAIRED' },
    );
    expect(unpaired.connected).toBe(false);
  });
});
