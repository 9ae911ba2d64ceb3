// The built gateway, as its own process, on the whatsapp network with the pinned library, against the WhatsApp
// stand-in (standin/, docs/standin.md): pairing by QR and by code, text and image to a phone (the same bytes
// decrypted there), delivered and read receipts, a phone's message as an incoming webhook with the gateway's
// delivery receipt, a phone's group both ways, a restart that resumes the session, and an unlink from the phone.
// SQLite only (vitest.config.ts): the store is not what this tests.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startReceiver, type Receiver } from '../events/helpers.js';
import { ensureBuilt } from '../helpers/built.js';
import { newStoreLocation, type StoreLocation } from '../helpers/gateway.js';
import { httpClient, startGatewayProcess, type GatewayProcess } from '../helpers/gateway-process.js';
import { decodeQrDataUrl } from '../helpers/qr.js';
import { startStandinProcess, type StandinProcess } from '../../standin/spawn.js';
import { waitFor } from '../helpers/wait.js';

const PNG = readFileSync(new URL('../fixtures/media/tiny.png', import.meta.url));
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const BY_QR = '15551230001';
const BY_CODE = '15551230002';
const FRIEND = '15551230003';
const MEMBER = '15551230004';
const WAIT = { timeoutMs: 20_000, intervalMs: 50 };

let standin: StandinProcess;
let location: StoreLocation;
let gateway: GatewayProcess;
let hooks: Receiver;
let files: Server;
let filesUrl: string;
const agent = new Agent();
let api: ReturnType<typeof httpClient>;

async function startTheGateway() {
  gateway = await startGatewayProcess(
    location,
    {
      GATEWAY_NETWORK: 'whatsapp',
      GATEWAY_NETWORK_KEY: Buffer.alloc(32, 3).toString('base64'),
      GATEWAY_WHATSAPP_URL: standin.ws,
      GATEWAY_WHATSAPP_ROOT_KEY: standin.root_key,
      GATEWAY_ALLOW_PRIVATE_URLS: 'true',
      GATEWAY_SEND_INTERVAL_MS: '0',
      NODE_EXTRA_CA_CERTS: standin.ca,
    },
    { built: true },
  );
  api = httpClient(gateway.port, agent);
}

const device = async (id: number) => (await api('GET', `/devices/${id}`)).body.data;
const phone = async (number: string) => (await standin.call('GET', `/control/phones/${number}`)).body;
const message = async (id: string) => (await api('GET', `/messages/${id}`)).body.data;

async function newDevice(name: string): Promise<number> {
  const created = await api('POST', '/devices', { package: 'BUSINESS', name });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const id = created.body.data.id as number;
  const patched = await api('PATCH', `/devices/${id}`, { webhook_url: hooks.url });
  expect(patched.status, JSON.stringify(patched.body)).toBe(200);
  return id;
}

const connected = (id: number) =>
  waitFor(
    () => device(id),
    (d) => d.paired_status === 'PAIRED' && d.connected === true,
    { ...WAIT, what: 'paired and connected' },
  );

let qrDevice: number;

beforeAll(async () => {
  ensureBuilt();
  [standin, location, hooks] = await Promise.all([startStandinProcess(), newStoreLocation(), startReceiver()]);
  files = createServer((_req, res) => res.writeHead(200, { 'content-type': 'image/png' }).end(PNG));
  await new Promise<void>((resolve) => files.listen(0, '127.0.0.1', resolve));
  filesUrl = `http://127.0.0.1:${(files.address() as { port: number }).port}/tiny.png`;
  await startTheGateway();
});

afterAll(async () => {
  await gateway?.stop();
  await standin?.stop();
  await hooks?.close();
  await new Promise((resolve) => files?.close(resolve));
  await agent.close();
  await location?.drop();
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
      params: { image: { url: filesUrl }, caption: 'a picture' },
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
    await gateway.stop();
    await startTheGateway();
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
