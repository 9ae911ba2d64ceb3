// docs/api.md, Presence and typing: POST /devices/{id}/presence and /typing tell the network, and the sandbox
// phone shows what it saw; every refusal at its boundary.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSandboxNetwork } from '../../src/network/sandbox/index.js';
import { adminGroup } from '../groups/helpers.js';
import { noStoreAvailable, startGateway, type TestGateway } from '../helpers/gateway.js';
import { createPairedDevice } from '../helpers/pairing.js';
import { sendChat } from '../events/helpers.js';
import { waitFor } from '../helpers/wait.js';

const PHONE = '6283477000001';
const FRIEND = '6283477990011';
const MEMBER = '6283477990012';
const STRANGER = '6283477990013';

describe.skipIf(noStoreAvailable)('presence and typing', () => {
  let gw: TestGateway;
  let device: any;
  beforeAll(async () => {
    gw = await startGateway({
      config: { sendIntervalMs: 0 },
      build: { network: createSandboxNetwork({ deliveryDelayMs: 5, readDelayMs: 5 }) },
    });
    device = await createPairedDevice(gw, PHONE);
  });
  afterAll(() => gw?.close());

  const seenBy = async (phone: string) => (await gw.request('GET', `/sandbox/phones/${phone}`)).body.data.presence;

  it('typing, recording and paused reach the phone named by number, in order', async () => {
    for (const state of ['composing', 'recording', 'paused']) {
      const res = await gw.request('POST', `/devices/${device.id}/typing`, { to: FRIEND, state });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body).toEqual({ code: 200, status: 200, message: 'Typing sent', data: null });
    }
    const seen = await seenBy(FRIEND);
    expect(seen.map((p: any) => [p.from, p.state])).toEqual([
      [PHONE, 'composing'],
      [PHONE, 'recording'],
      [PHONE, 'paused'],
    ]);
    expect(seen[0].group_id).toBeUndefined();
    expect(Number.isNaN(Date.parse(seen[0].at))).toBe(false);
  });

  it('typing in a group, named by its JID or by the gateway’s id, reaches every other member', async () => {
    const group = await adminGroup(gw, PHONE, 'Typists', [MEMBER]);
    const byJid = await gw.request('POST', `/devices/${device.id}/typing`, {
      to: group.network_id,
      state: 'composing',
    });
    expect(byJid.status, JSON.stringify(byJid.body)).toBe(200);
    const byId = await gw.request('POST', `/api/devices/${device.id}/typing`, {
      to: String(group.id),
      state: 'paused',
    });
    expect(byId.status, JSON.stringify(byId.body)).toBe(200);
    expect(await seenBy(MEMBER)).toMatchObject([
      { from: PHONE, state: 'composing', group_id: group.network_id },
      { from: PHONE, state: 'paused', group_id: group.network_id },
    ]);
    const unknown = await gw.request('POST', `/devices/${device.id}/typing`, { to: '999999', state: 'paused' });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ code: 404, status: 404, message: 'Group not found' });
  });

  it('presence reaches the phones the device wrote to, not the others', async () => {
    const sent = await sendChat(gw, PHONE, FRIEND, 'hello there');
    await waitFor(
      async () => (await gw.request('GET', `/messages/${sent}`)).body.data.status,
      (s) => s === 'delivered',
      { what: 'delivered' },
    );
    for (const presence of ['available', 'unavailable']) {
      const res = await gw.request('POST', `/devices/${device.id}/presence`, { presence });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body).toEqual({ code: 200, status: 200, message: 'Presence sent', data: null });
    }
    const states = (await seenBy(FRIEND)).map((p: any) => p.state);
    expect(states.slice(-2)).toEqual(['available', 'unavailable']);
    await gw.request('POST', '/sandbox/phones', { phone: STRANGER });
    expect(await seenBy(STRANGER)).toEqual([]);
  });

  it.each([
    ['presence', {}, 'presence'],
    ['presence', { presence: 'online' }, 'presence'],
    ['presence', { presence: 1 }, 'presence'],
    ['typing', { state: 'composing' }, 'to'],
    ['typing', { to: FRIEND }, 'state'],
    ['typing', { to: FRIEND, state: 'typing' }, 'state'],
    ['typing', { to: '+62 834', state: 'composing' }, 'to'],
    ['typing', { to: 'someone@example', state: 'composing' }, 'to'],
    ['typing', { to: 'x'.repeat(65), state: 'composing' }, 'to'],
  ])('%s refuses %j with 400 naming %s', async (path, body, field) => {
    const res = await gw.request('POST', `/devices/${device.id}/${path}`, body);
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.body.message).toBe('Validation failed');
    expect(Object.keys(res.body.errors)).toEqual([field]);
  });

  it('400 Device not connected for a device that is not connected', async () => {
    const idle = await gw.request('POST', '/devices', { package: 'BETA', name: 'idle', phone: '6283477000002' });
    const id = idle.body.data.id;
    for (const [path, body] of [
      ['presence', { presence: 'available' }],
      ['typing', { to: FRIEND, state: 'composing' }],
    ] as const) {
      const res = await gw.request('POST', `/devices/${id}/${path}`, body);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ code: 400, status: 400, message: 'Device not connected' });
    }
  });

  it('404 for another account’s device and for an unknown one', async () => {
    const other = await gw.app.services.accounts.createAccount('presence-other');
    const otherToken = (await gw.app.services.accounts.createToken(other.id, 't')).token;
    for (const [path, body] of [
      ['presence', { presence: 'available' }],
      ['typing', { to: FRIEND, state: 'composing' }],
    ] as const) {
      const theirs = await gw.request('POST', `/devices/${device.id}/${path}`, body, otherToken);
      expect(theirs.status).toBe(404);
      expect(theirs.body).toEqual({ code: 404, status: 404, message: 'Device not found' });
      const unknown = await gw.request('POST', `/devices/987654/${path}`, body);
      expect(unknown.status).toBe(404);
      expect(unknown.body.message).toBe('Device not found');
    }
    expect((await seenBy(FRIEND)).every((p: any) => p.from === PHONE)).toBe(true);
  });
});
