// The built gateway against the WhatsApp stand-in (docs/standin.md) under the faults of the wire
// (docs/whatsapp.md): a slow media upload must not eat the acknowledgement window, an acknowledgement that comes
// after the window still moves the message to `sent`. Its own gateway, with a short acknowledgement window
// (GATEWAY_WHATSAPP_ACK_TIMEOUT_MS), so the faults stay small. SQLite only (vitest.config.ts).
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { Agent } from 'undici';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startReceiver, type Receiver } from '../events/helpers.js';
import { ensureBuilt } from '../helpers/built.js';
import { newStoreLocation, type StoreLocation } from '../helpers/gateway.js';
import { httpClient, startGatewayProcess, type GatewayProcess } from '../helpers/gateway-process.js';
import { decodeQrDataUrl } from '../helpers/qr.js';
import { startStandinProcess, type StandinProcess } from '../../standin/spawn.js';
import { waitFor } from '../helpers/wait.js';

const PNG = readFileSync(new URL('../fixtures/media/tiny.png', import.meta.url));
const ME = '15552340001';
const FRIEND = '15552340002';
const WAIT = { timeoutMs: 20_000, intervalMs: 50 };
/** The gateway's acknowledgement window here; the faults below are sized against it. */
const ACK_TIMEOUT_MS = 1500;

let standin: StandinProcess;
let location: StoreLocation;
let gateway: GatewayProcess;
let hooks: Receiver;
let files: Server;
let filesUrl: string;
const agent = new Agent();
let api: ReturnType<typeof httpClient>;
let deviceId: number;

const device = async (id: number) => (await api('GET', `/devices/${id}`)).body.data;
const phone = async (number: string) => (await standin.call('GET', `/control/phones/${number}`)).body;
const message = async (id: string) => (await api('GET', `/messages/${id}`)).body.data;
const faults = (body: Record<string, unknown>) => standin.call('POST', '/control/faults', body);

const connected = (id: number) =>
  waitFor(
    () => device(id),
    (d) => d.paired_status === 'PAIRED' && d.connected === true,
    { ...WAIT, what: 'paired and connected' },
  );

beforeAll(async () => {
  ensureBuilt();
  [standin, location, hooks] = await Promise.all([startStandinProcess(), newStoreLocation(), startReceiver()]);
  files = createServer((_req, res) => res.writeHead(200, { 'content-type': 'image/png' }).end(PNG));
  await new Promise<void>((resolve) => files.listen(0, '127.0.0.1', resolve));
  filesUrl = `http://127.0.0.1:${(files.address() as { port: number }).port}/tiny.png`;
  gateway = await startGatewayProcess(
    location,
    {
      GATEWAY_NETWORK: 'whatsapp',
      GATEWAY_NETWORK_KEY: Buffer.alloc(32, 5).toString('base64'),
      GATEWAY_WHATSAPP_URL: standin.ws,
      GATEWAY_WHATSAPP_ROOT_KEY: standin.root_key,
      GATEWAY_WHATSAPP_ACK_TIMEOUT_MS: String(ACK_TIMEOUT_MS),
      GATEWAY_ALLOW_PRIVATE_URLS: 'true',
      GATEWAY_SEND_INTERVAL_MS: '0',
      NODE_EXTRA_CA_CERTS: standin.ca,
    },
    { built: true },
  );
  api = httpClient(gateway.port, agent);
  const created = await api('POST', '/devices', { package: 'BUSINESS', name: 'wire' });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  deviceId = created.body.data.id as number;
  expect((await api('PATCH', `/devices/${deviceId}`, { webhook_url: hooks.url })).status).toBe(200);
  const qr = await waitFor(
    () => api('GET', `/devices/${deviceId}/qr?response_type=url`),
    (r) => r.status === 200 && !!r.body.data?.qr,
    { ...WAIT, what: 'a QR code' },
  );
  const scanned = await standin.call('POST', '/control/scan', { qr: decodeQrDataUrl(qr.body.data.qr), phone: ME });
  expect(scanned.status, JSON.stringify(scanned.body)).toBe(200);
  await connected(deviceId);
});

afterEach(async () => {
  await faults({});
});

afterAll(async () => {
  await gateway?.stop();
  await standin?.stop();
  await hooks?.close();
  await new Promise((resolve) => files?.close(resolve));
  await agent.close();
  await location?.drop();
});

describe('the WhatsApp connector on a faulty wire', () => {
  it('an upload slower than the acknowledgement window: sent once, the wait starting when the stanza left', async () => {
    // The phone's receipt held back, so only the acknowledgement can make the message `sent`.
    await faults({ slow_upload_ms: ACK_TIMEOUT_MS + 1500, receipt_delay_ms: 600_000 });
    const image = await api('POST', '/messages', {
      device: ME,
      receiver: FRIEND,
      type: 'image',
      params: { image: { url: filesUrl }, caption: 'slow upload' },
    });
    expect(image.status, JSON.stringify(image.body)).toBe(200);
    const sent = await waitFor(
      () => message(image.body.data.id),
      (m) => m.status === 'sent',
      { ...WAIT, what: 'sent' },
    );
    expect(sent.failed_reason).toBeNull();
    const copies = (await phone(FRIEND)).inbox.filter((m: any) => m.text === 'slow upload');
    expect(copies).toHaveLength(1);
  });

  it('an acknowledgement after the window still moves the message to sent', async () => {
    await faults({ ack_delay_ms: ACK_TIMEOUT_MS + 2000, receipt_delay_ms: 600_000 });
    const text = await api('POST', '/messages', {
      device: ME,
      receiver: FRIEND,
      type: 'chat',
      params: { text: 'late ack' },
    });
    expect(text.status, JSON.stringify(text.body)).toBe(200);
    const id = text.body.data.id as string;
    await waitFor(
      () => message(id),
      (m) => m.status === 'sent',
      { ...WAIT, what: 'sent after the late acknowledgement' },
    );
    await waitFor(
      () => hooks.events().filter((e) => e.type === 'message.sent' && e.data?.id === id),
      (events) => events.length === 1,
      { ...WAIT, what: 'one message.sent' },
    );
  });
});
