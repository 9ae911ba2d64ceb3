// docs/internals.md, WhatsApp and sandbox accounts, sandbox accounts: a gateway configured for WhatsApp runs the
// sandbox beside it. An account created with `gateway accounts create NAME
// --sandbox` has its devices on the sandbox: they pair, send (accepted → sent
// → delivered) and receive there, end to end. Every other account's devices go
// to WhatsApp and are out of the sandbox control API's reach (404 `Device not
// found`). "WhatsApp" here is a local TCP server that drops every connection
// (GATEWAY_WHATSAPP_URL), so a device that reaches it cannot pair.
import { createServer, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, type CliIo } from '../../src/cli/main.js';
import {
  TEST_TOKEN,
  noStoreAvailable,
  startGateway,
  type StoreLocation,
  type TestGateway,
} from '../helpers/gateway.js';
import { qrText } from '../helpers/pairing.js';
import { waitFor } from '../helpers/wait.js';
import { quickWebhooks, startReceiver, verified, waitForEvent, type Receiver } from '../events/helpers.js';

const KEYS = { current: Buffer.alloc(32, 0x2a), previous: [] };
const TESTER_PHONE = '6281260000001'; // the sandbox account's device
const PRODUCTION_PHONE = '6281260000002'; // given at creation to the default account's device
const CUSTOMER = '6281269990015'; // a virtual phone (no magic last digits)
const NOT_ON_SANDBOX = 'this account is not a sandbox account: its devices are on the real network';

describe.skipIf(noStoreAvailable)('sandbox accounts beside WhatsApp', () => {
  let whatsapp: Server;
  let whatsappConnections = 0;
  let gw: TestGateway;
  let hooks: Receiver;
  let tester: string;
  let testerDevice: any;
  let productionDevice: any;

  async function cli(...argv: string[]) {
    const out: string[] = [];
    const err: string[] = [];
    const io: CliIo = {
      env: {
        GATEWAY_DATA_DIR: gw.location.dataDir,
        ...(gw.location.databaseUrl === null ? {} : { DATABASE_URL: gw.location.databaseUrl }),
        GATEWAY_NETWORK: 'whatsapp',
        GATEWAY_NETWORK_KEY: KEYS.current.toString('base64'),
      },
      out: (line) => out.push(line),
      err: (line) => err.push(line),
    };
    const code = await runCli(argv, io);
    return { code, out: out.join('\n'), err: err.join('\n') };
  }

  let whatsappUrl: string;
  const start = (location?: StoreLocation) =>
    startGateway({
      ...(location === undefined ? {} : { location }),
      config: { network: 'whatsapp', networkKey: KEYS, whatsappUrl, allowPrivateUrls: true, sendIntervalMs: 0 },
      build: {
        sandbox: { deliveryDelayMs: 1, readDelayMs: 1 },
        webhooks: quickWebhooks,
        connections: { qrWaitMs: 8_000 },
      },
    });

  const as = (token: string) => ({
    get: (url: string) => gw.request('GET', url, undefined, token),
    post: (url: string, body?: unknown) => gw.request('POST', url, body ?? {}, token),
  });

  beforeAll(async () => {
    whatsapp = createServer((socket) => {
      whatsappConnections += 1;
      socket.destroy();
    });
    await new Promise<void>((resolve) => whatsapp.listen(0, '127.0.0.1', resolve));
    const address = whatsapp.address();
    if (address === null || typeof address === 'string') throw new Error('no port');
    hooks = await startReceiver();
    whatsappUrl = `ws://127.0.0.1:${address.port}/ws/chat`;
    gw = await start();
    const created = await cli('accounts', 'create', 'tester', '--sandbox');
    expect(created.err).toBe('');
    expect(created.code).toBe(0);
    expect(created.out).toMatch(/^Created sandbox account "tester" \(id \d+, device limit 10\)\./);
    tester = /mgw_[A-Za-z0-9_-]{20,}/.exec(created.out)![0];
  });
  afterAll(async () => {
    await gw?.close();
    await hooks?.close();
    await new Promise<void>((resolve) => (whatsapp ? whatsapp.close(() => resolve()) : resolve()));
  });

  it('the CLI shows which accounts are sandbox accounts', async () => {
    const listed = await cli('accounts', 'list');
    expect(listed.code).toBe(0);
    const [header, ...rows] = listed.out.split('\n');
    expect(header).toBe('id\tname\tmax_devices\tsandbox');
    expect(rows.map((row) => row.split('\t').slice(1))).toEqual([
      ['default', '10', 'false'],
      ['tester', '10', 'true'],
    ]);
  });

  it('GET /gateway names the network of the caller’s devices', async () => {
    const mine = await as(tester).get('/gateway');
    expect(mine.status).toBe(200);
    expect(mine.body.data).toMatchObject({
      network: 'sandbox',
      sandbox_control: true,
      account: { name: 'tester', sandbox: true },
    });
    const production = await as(TEST_TOKEN).get('/gateway');
    expect(production.body.data).toMatchObject({
      network: 'whatsapp',
      sandbox_control: false,
      account: { name: 'default', sandbox: false },
    });
  });

  it('a sandbox account’s device pairs on the sandbox, not on WhatsApp', async () => {
    const created = await as(tester).post('/devices', { package: 'BUSINESS', name: 'tester device' });
    expect(created.status).toBe(201);
    const id = created.body.data.id as number;
    const patched = await gw.request('PATCH', `/devices/${id}`, { webhook_url: hooks.url }, tester);
    expect(patched.status).toBe(200);
    const before = whatsappConnections;
    const scan = await as(tester).post('/sandbox/scan', { qr: await qrText(gw, id, tester), phone: TESTER_PHONE });
    expect(scan.status, JSON.stringify(scan.body)).toBe(200);
    testerDevice = await waitFor(
      async () => (await as(tester).get(`/devices/${id}`)).body.data,
      (d) => d.paired_status === 'PAIRED' && d.connected === true,
      { what: 'paired and connected on the sandbox' },
    );
    expect(testerDevice.phone).toBe(TESTER_PHONE);
    expect(whatsappConnections).toBe(before);
    await waitForEvent(hooks, 'device.paired', (e) => e.device.id === id);
  });

  it('a sandbox account’s device pairs by code on the sandbox too; another account cannot type that code', async () => {
    const phone = '6281260000003';
    const created = await as(tester).post('/devices', { package: 'BETA', name: 'by code', phone });
    const id = created.body.data.id as number;
    const code = await as(tester).post(`/devices/${id}/pairing-code`, { phone });
    expect(code.status, JSON.stringify(code.body)).toBe(200);
    const pairingCode = code.body.data.pairing_code as string;
    const foreign = await as(TEST_TOKEN).post('/sandbox/pair', { pairing_code: pairingCode, phone });
    expect(foreign.status).toBe(400);
    expect(foreign.body).toMatchObject({ code: 400, status: 400, message: 'Invalid pairing code' });
    const typed = await as(tester).post('/sandbox/pair', { pairing_code: pairingCode, phone });
    expect(typed.status, JSON.stringify(typed.body)).toBe(200);
    await waitFor(
      async () => (await as(tester).get(`/devices/${id}`)).body.data,
      (d) => d.paired_status === 'PAIRED' && d.connected === true && d.phone === phone,
      { what: 'paired by code on the sandbox' },
    );
  });

  it('it sends through the sandbox: accepted, sent, delivered, with webhooks', async () => {
    const accepted = await as(tester).post('/messages', {
      device: TESTER_PHONE,
      receiver: CUSTOMER,
      type: 'chat',
      params: { text: 'hello from a sandbox account' },
    });
    expect(accepted.status, JSON.stringify(accepted.body)).toBe(200);
    expect(accepted.body.data.status).toBe('pending');
    const id = accepted.body.data.id as string;
    const delivered = await waitFor(
      async () => (await as(tester).get(`/messages/${id}`)).body.data,
      (m) => m.status === 'delivered',
      { what: 'delivered' },
    );
    expect(delivered.sent_at).toEqual(expect.any(String));
    expect(delivered.delivered_at).toEqual(expect.any(String));
    await waitForEvent(hooks, 'message.sent', (e) => e.data.id === id);
    await waitForEvent(hooks, 'message.delivered', (e) => e.data.id === id);
    const phone = await as(tester).get(`/sandbox/phones/${CUSTOMER}`);
    expect(phone.body.data.inbox).toEqual([
      expect.objectContaining({ message_id: id, from: TESTER_PHONE, type: 'chat' }),
    ]);
  });

  it('it receives through the sandbox: stored and delivered as message.incoming', async () => {
    const sent = await as(tester).post(`/sandbox/phones/${CUSTOMER}/messages`, {
      to: TESTER_PHONE,
      text: 'a reply from the customer',
    });
    expect(sent.status, JSON.stringify(sent.body)).toBe(200);
    const request = await waitForEvent(hooks, 'message.incoming');
    const event = verified(testerDevice.webhook_secret, request);
    expect(event.device).toEqual({ id: testerDevice.id, phone: TESTER_PHONE });
    expect(event.data).toMatchObject({
      direction: 'incoming',
      sender: CUSTOMER,
      device: TESTER_PHONE,
      message: 'a reply from the customer',
    });
    const listed = await as(tester).get('/messages?direction=incoming');
    expect(listed.body.data.map((m: any) => m.message)).toEqual(['a reply from the customer']);
  });

  it('another account’s device is on WhatsApp and out of the control API’s reach', async () => {
    const created = await as(TEST_TOKEN).post('/devices', {
      package: 'BETA',
      name: 'production',
      phone: PRODUCTION_PHONE,
    });
    expect(created.status).toBe(201);
    productionDevice = created.body.data;
    const notOnSandbox = { code: 404, status: 404, message: 'Device not found', error: NOT_ON_SANDBOX };
    for (const [method, url, body] of [
      ['GET', `/sandbox/devices/${productionDevice.id}/qr`, undefined],
      ['POST', `/sandbox/devices/${productionDevice.id}/disconnect`, {}],
      ['POST', `/sandbox/devices/${productionDevice.id}/disconnect`, { logout: true }],
      ['POST', `/sandbox/phones/${CUSTOMER}/messages`, { to: PRODUCTION_PHONE, text: 'hi' }],
      ['POST', `/api/sandbox/devices/${productionDevice.id}/disconnect`, {}],
    ] as const) {
      const res = await gw.request(method, url, body);
      expect(res.status, `${method} ${url}`).toBe(404);
      expect(res.body, `${method} ${url}`).toEqual(notOnSandbox);
    }
    // Its messages are not the sandbox's to read.
    const read = await as(TEST_TOKEN).post(`/sandbox/phones/${CUSTOMER}/read`, { message_id: 'X'.repeat(26) });
    expect(read.status).toBe(404);
    expect(read.body).toEqual({ code: 404, status: 404, message: 'Message not found', error: NOT_ON_SANDBOX });
    // No QR of the sandbox is this account's to scan.
    const scan = await as(TEST_TOKEN).post('/sandbox/scan', { qr: 'sandbox-qr-unknown', phone: PRODUCTION_PHONE });
    expect(scan.status).toBe(400);
    expect(scan.body).toMatchObject({ code: 400, status: 400, message: 'Invalid QR code' });
    // Nothing changed: still unpaired, never on the sandbox.
    const after = (await as(TEST_TOKEN).get(`/devices/${productionDevice.id}`)).body.data;
    expect(after).toMatchObject({ paired_status: 'UNPAIRED', connected: false });
  });

  it('another account’s device pairs on WhatsApp (unreachable here: 500 QR code generation failed)', async () => {
    const before = whatsappConnections;
    const res = await as(TEST_TOKEN).get(`/devices/${productionDevice.id}/qr?response_type=url`);
    expect(res.status).toBe(500);
    expect(res.body).toMatchObject({ code: 500, status: 500, message: 'QR code generation failed' });
    expect(whatsappConnections).toBeGreaterThan(before);
  });

  it('a sandbox account cannot reach another account’s device either', async () => {
    const res = await as(tester).post(`/sandbox/devices/${productionDevice.id}/disconnect`, {});
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ code: 404, status: 404, message: 'Device not found' });
  });

  it('the sandbox control API still acts on the sandbox account’s own device', async () => {
    const res = await as(tester).post(`/sandbox/devices/${testerDevice.id}/disconnect`, {});
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toEqual({ code: 200, status: 200, message: 'Connection dropped', data: null });
    // It comes back by itself, on the sandbox.
    await waitFor(
      async () => (await as(tester).get(`/devices/${testerDevice.id}`)).body.data,
      (d) => d.paired_status === 'PAIRED' && d.connected === true,
      { what: 'reconnected on the sandbox', timeoutMs: 10_000 },
    );
  });

  it('after a restart, the sandbox account’s device reconnects on the sandbox from its stored session', async () => {
    const location = gw.location;
    await gw.close({ keepStore: true });
    const before = whatsappConnections;
    gw = await start(location);
    await gw.app.ready();
    await waitFor(
      async () => (await as(tester).get(`/devices/${testerDevice.id}`)).body.data,
      (d) => d.paired_status === 'PAIRED' && d.connected === true,
      { what: 'reconnected after the restart', timeoutMs: 10_000 },
    );
    expect(whatsappConnections).toBe(before);
    const again = await as(tester).post('/messages', {
      device: TESTER_PHONE,
      receiver: CUSTOMER,
      type: 'chat',
      params: { text: 'still on the sandbox' },
    });
    expect(again.status).toBe(200);
    await waitFor(
      async () => (await as(tester).get(`/messages/${again.body.data.id}`)).body.data.status,
      (status) => status === 'delivered',
      { what: 'delivered after the restart' },
    );
  });
});
