// Issue 10, item 6: the sandbox is one simulated world, but its control API
// acts only on the caller's devices and on what they sent and received. Two
// accounts, every control route: the other account is told exactly what it
// would be told about something that does not exist, and nothing changes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_TOKEN, noStoreAvailable, startGateway, type TestGateway } from '../helpers/gateway.js';
import { qrText, sandboxQrText, waitForDevice } from '../helpers/pairing.js';
import { waitFor } from '../helpers/wait.js';
import { SandboxControlError } from '../../src/network/sandbox-control.js';

const PHONE = '6281240000100'; // a virtual phone both accounts write to
const OURS = '6281240000001'; // the default account's device
const THEIRS = '6281240000002'; // the other account's device
const RESERVED = '6281240000003'; // given at creation to a default-account device that is not paired yet

describe.skipIf(noStoreAvailable)('sandbox control API across accounts', () => {
  let gw: TestGateway;
  let other: string;
  let ours: { id: number };
  let theirs: { id: number };
  let ourMessage: string;
  let theirMessage: string;

  async function paired(phone: string, token: string) {
    const created = await gw.request('POST', '/devices', { package: 'BUSINESS', name: phone }, token);
    const id = created.body.data.id as number;
    const scan = await gw.request('POST', '/sandbox/scan', { qr: await sandboxQrText(gw, id, token), phone }, token);
    expect(scan.status, JSON.stringify(scan.body)).toBe(200);
    return waitFor(
      async () => (await gw.request('GET', `/devices/${id}`, undefined, token)).body.data,
      (d) => d.paired_status === 'PAIRED' && d.connected === true,
      { what: `${phone} paired` },
    );
  }

  async function send(device: string, token: string, text: string): Promise<string> {
    const res = await gw.request(
      'POST',
      '/messages',
      { device, receiver: PHONE, type: 'chat', params: { text } },
      token,
    );
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.data.id;
  }

  const inbox = async (token: string) => (await gw.request('GET', `/sandbox/phones/${PHONE}`, undefined, token)).body;

  beforeAll(async () => {
    gw = await startGateway({ config: { sendIntervalMs: 0 }, build: { sandbox: { deliveryDelayMs: 1 } } });
    const account = await gw.app.services.accounts.createAccount('acme');
    other = (await gw.app.services.accounts.createToken(account.id, 'acme')).token;
    ours = await paired(OURS, TEST_TOKEN);
    theirs = await paired(THEIRS, other);
    await gw.request('POST', '/devices', { package: 'BUSINESS', name: 'reserved', phone: RESERVED });
    ourMessage = await send(OURS, TEST_TOKEN, 'default account secret');
    theirMessage = await send(THEIRS, other, 'acme secret');
    // The phone exists in the world only once the first message reaches it: until then the count is 0.
    await waitFor(
      async () => {
        try {
          return (await gw.app.services.network.sandbox!.getPhone(PHONE)).inbox.length;
        } catch (error) {
          if (error instanceof SandboxControlError && error.status === 404) return 0;
          throw error;
        }
      },
      (count) => count === 2,
      { what: 'both messages in the phone’s inbox' },
    );
  });
  afterAll(async () => {
    await gw?.close();
  });

  it('GET /sandbox/phones/{phone} shows each account only the messages its devices sent', async () => {
    const mine = await inbox(TEST_TOKEN);
    expect(mine.code).toBe(200);
    expect(mine.data.inbox.map((e: any) => e.message_id)).toEqual([ourMessage]);
    expect(JSON.stringify(mine)).not.toContain('acme secret');
    const acme = await inbox(other);
    expect(acme.data.inbox.map((e: any) => e.message_id)).toEqual([theirMessage]);
    expect(JSON.stringify(acme)).not.toContain('default account secret');
  });

  it('POST /sandbox/phones/{phone}/messages reaches only the caller’s devices', async () => {
    const foreign = await gw.request(
      'POST',
      `/sandbox/phones/${PHONE}/messages`,
      { to: OURS, text: 'injected' },
      other,
    );
    expect(foreign.status).toBe(404);
    expect(foreign.body).toMatchObject({ code: 404, status: 404, message: 'Device not found' });
    // A device created for a number but not paired has nowhere to receive either.
    const unpaired = await gw.request('POST', `/sandbox/phones/${PHONE}/messages`, { to: RESERVED, text: 'x' });
    expect(unpaired.body).toMatchObject({ code: 404, status: 404, message: 'Device not found' });

    const own = await gw.request('POST', `/sandbox/phones/${PHONE}/messages`, { to: THEIRS, text: 'for acme' }, other);
    expect(own.status, JSON.stringify(own.body)).toBe(200);
    const incoming = await waitFor(
      async () => (await gw.request('GET', '/messages?direction=incoming', undefined, other)).body.data,
      (list: any[]) => list.length === 1,
      { what: 'acme’s incoming message' },
    );
    expect(incoming[0]).toMatchObject({ message: 'for acme' });
    const defaults = await gw.request('GET', '/messages?direction=incoming');
    expect(defaults.body.data).toEqual([]);
  });

  it('POST /sandbox/phones/{phone}/read acts only on the caller’s messages', async () => {
    const foreign = await gw.request('POST', `/sandbox/phones/${PHONE}/read`, { message_id: ourMessage }, other);
    expect(foreign.status).toBe(404);
    expect(foreign.body).toMatchObject({ code: 404, status: 404, message: 'Message not found' });
    expect((await gw.request('GET', `/messages/${ourMessage}`)).body.data.read_at).toBeNull();

    const own = await gw.request('POST', `/sandbox/phones/${PHONE}/read`, { message_id: ourMessage });
    expect(own.status, JSON.stringify(own.body)).toBe(200);
    await waitFor(
      async () => (await gw.request('GET', `/messages/${ourMessage}`)).body.data.read_at,
      (at) => typeof at === 'string',
      { what: 'the read receipt' },
    );
  });

  it('POST /sandbox/phones refuses to change another account’s device numbers', async () => {
    for (const phone of [OURS, RESERVED]) {
      const res = await gw.request('POST', '/sandbox/phones', { phone, registered: false }, other);
      expect(res.status, phone).toBe(403);
      expect(res.body).toEqual({
        code: 403,
        status: 403,
        message: 'Access denied',
        error: 'this number belongs to a device of another account',
      });
      expect((await gw.request('GET', `/sandbox/phones/${phone}`)).body.data?.registered ?? true).toBe(true);
    }
    // Its own device's number and any free number are the caller's to set up.
    expect((await gw.request('POST', '/sandbox/phones', { phone: THEIRS, name: 'acme phone' }, other)).status).toBe(
      200,
    );
    expect((await gw.request('POST', '/sandbox/phones', { phone: '6281240000200', online: true }, other)).status).toBe(
      200,
    );
  });

  it('POST /sandbox/groups refuses another account’s device as a member, naming it', async () => {
    const members = [{ phone: THEIRS, admin: true }, { phone: '6281240000201' }, { phone: OURS }];
    const foreign = await gw.request('POST', '/sandbox/groups', { name: 'Hijack', members }, other);
    expect(foreign.status).toBe(403);
    expect(foreign.body).toMatchObject({
      code: 403,
      status: 403,
      message: 'Access denied',
      errors: { 'members.2.phone': ['this number belongs to a device of another account'] },
    });
    expect(Object.keys(foreign.body.errors)).toEqual(['members.2.phone']);
    const own = await gw.request('POST', '/sandbox/groups', { name: 'Own', members: members.slice(0, 2) }, other);
    expect(own.status, JSON.stringify(own.body)).toBe(201);
  });

  it('POST /sandbox/scan pairs only the caller’s devices', async () => {
    const id = (await gw.request('POST', '/devices', { package: 'BUSINESS', name: 'to pair' })).body.data.id;
    const qr = await qrText(gw, id);
    const foreign = await gw.request('POST', '/sandbox/scan', { qr, phone: '6281240000300' }, other);
    expect(foreign.status).toBe(400);
    expect(foreign.body).toMatchObject({ code: 400, status: 400, message: 'Invalid QR code' });
    expect((await gw.request('GET', `/devices/${id}`)).body.data.paired_status).toBe('UNPAIRED');
    const own = await gw.request('POST', '/sandbox/scan', { qr, phone: '6281240000300' });
    expect(own.status, JSON.stringify(own.body)).toBe(200);
    await waitForDevice(gw, id, (d) => d.paired_status === 'PAIRED');
  });

  it('GET /sandbox/devices/{id}/qr and POST /sandbox/devices/{id}/disconnect answer 404 for another account’s device', async () => {
    const qr = await gw.request('GET', `/sandbox/devices/${ours.id}/qr`, undefined, other);
    expect(qr.body).toEqual({ code: 404, status: 404, message: 'Device not found' });
    const drop = await gw.request('POST', `/sandbox/devices/${ours.id}/disconnect`, { logout: true }, other);
    expect(drop.body).toEqual({ code: 404, status: 404, message: 'Device not found' });
    expect((await gw.request('GET', `/devices/${ours.id}`)).body.data.paired_status).toBe('PAIRED');
    expect((await gw.request('GET', `/devices/${theirs.id}`, undefined, other)).body.data.paired_status).toBe('PAIRED');
  });
});
