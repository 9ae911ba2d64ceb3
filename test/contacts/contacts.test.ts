// DECISIONS 16 (docs/api.md, Contacts): the contact list, one contact (cached 24 hours on the injected clock),
// block, unblock, the blocked list, contact.updated, and every error at its boundary, end to end through the sandbox.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { noStoreAvailable, startGateway, type TestGateway } from '../helpers/gateway.js';
import { createPairedDevice } from '../helpers/pairing.js';
import { ShiftedClock } from '../helpers/shifted-clock.js';
import { waitFor } from '../helpers/wait.js';
import { numbers } from '../groups/helpers.js';
import { recordedEvents } from '../events/helpers.js';

const DAY = 24 * 60 * 60 * 1000;
const fresh = numbers('62836');

describe.skipIf(noStoreAvailable)('contacts', () => {
  let gw: TestGateway;
  let device: string;
  let deviceId: number;
  const clock = new ShiftedClock();
  beforeAll(async () => {
    gw = await startGateway({ clock, build: { sandbox: { deliveryDelayMs: 5, readDelayMs: 5 } } });
    const paired = await createPairedDevice(gw, '6283699000001');
    device = paired.phone;
    deviceId = paired.id;
    const hooked = await gw.request('PATCH', `/devices/${deviceId}`, {
      webhook_url: 'https://hooks.example.invalid/c',
    });
    expect(hooked.status).toBe(200);
  });
  afterAll(() => gw?.close());

  const phone = async (settings: Record<string, unknown>) => {
    const res = await gw.request('POST', '/sandbox/phones', settings);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.data;
  };
  const events = async (type: string) => (await recordedEvents(gw, deviceId, type)).map((e) => e.data);
  const contact = (p: string, ref = device) => gw.request('GET', `/contacts/${p}?device=${ref}`);

  it('lists the address book (named phones) and every number the device exchanged messages with, by device number or id', async () => {
    const [named, written, writer] = fresh(3) as [string, string, string];
    await phone({ phone: named, name: 'Ana', is_business: true });
    const sent = await gw.request('POST', '/messages', {
      device,
      receiver: written,
      type: 'chat',
      params: { text: 'hi' },
    });
    expect(sent.status, JSON.stringify(sent.body)).toBe(200);
    expect((await gw.request('POST', `/sandbox/phones/${writer}/messages`, { to: device, text: 'hello' })).status).toBe(
      200,
    );
    const listed = await waitFor(
      async () => (await gw.request('GET', `/contacts?device=${device}`)).body,
      (body: any) =>
        body.data?.some((c: any) => c.phone === writer) && body.data?.some((c: any) => c.phone === written),
      { what: 'both numbers listed' },
    );
    expect(listed).toMatchObject({ code: 200, status: 200, message: 'Contacts retrieved' });
    expect(listed.data).toContainEqual({ phone: named, name: 'Ana', notify_name: 'Ana', is_business: true });
    expect(listed.data).toContainEqual({ phone: written, name: null, notify_name: null, is_business: false });
    expect(listed.data).toContainEqual({ phone: writer, name: null, notify_name: null, is_business: false });
    expect(listed.data.filter((c: any) => c.phone === written)).toHaveLength(1);
    const phones = listed.data.map((c: any) => c.phone);
    expect(phones).toEqual([...phones].sort());
    expect((await gw.request('GET', `/contacts?device=${deviceId}`)).body.data).toEqual(listed.data);
  });

  it('answers one contact from the network, then from the store for up to 24 hours', async () => {
    const [p] = fresh(1) as [string];
    await phone({ phone: p, name: 'Budi', about: 'At work', picture_url: 'https://pics.example/budi.jpg' });
    const first = await contact(p);
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.body).toEqual({
      code: 200,
      status: 200,
      message: 'Contact retrieved',
      data: {
        phone: p,
        name: 'Budi',
        about: 'At work',
        profile_picture_url: 'https://pics.example/budi.jpg',
        registered: true,
        blocked: false,
      },
    });
    await phone({ phone: p, about: 'On holiday' });
    clock.advance(DAY - 60_000);
    expect((await contact(p)).body.data.about).toBe('At work');
    clock.advance(61_000);
    expect((await contact(p)).body.data.about).toBe('On holiday');
  });

  it('answers unregistered numbers and hidden profiles with nulls', async () => {
    const unregistered = await contact('6283611110000');
    expect(unregistered.body.data).toEqual({
      phone: '6283611110000',
      name: null,
      about: null,
      profile_picture_url: null,
      registered: false,
      blocked: false,
    });
    const [hidden] = fresh(1) as [string];
    await phone({
      phone: hidden,
      name: 'Citra',
      about: 'secret',
      picture_url: 'https://pics.example/c.jpg',
      privacy: 'nobody',
    });
    expect((await contact(hidden)).body.data).toMatchObject({ name: 'Citra', about: null, profile_picture_url: null });
  });

  it('blocks and unblocks on the network; the cached contact and the blocked list show it at once', async () => {
    const [p] = fresh(1) as [string];
    await phone({ phone: p, name: 'Dewi' });
    expect((await contact(p)).body.data.blocked).toBe(false);
    const blocked = await gw.request('POST', `/contacts/${p}/block`, { device });
    expect(blocked.body).toEqual({
      code: 200,
      status: 200,
      message: 'Contact blocked',
      data: { phone: p, blocked: true },
    });
    expect((await contact(p)).body.data.blocked).toBe(true);
    expect((await gw.request('GET', `/sandbox/phones/${p}`)).body.data.blocked_by).toEqual([device]);
    const list = await gw.request('GET', `/contacts/blocked?device=${device}`);
    expect(list.body).toMatchObject({ code: 200, message: 'Blocked contacts retrieved' });
    expect(list.body.data).toContainEqual({ phone: p });
    // Blocking twice is no error.
    expect((await gw.request('POST', `/contacts/${p}/block`, { device })).status).toBe(200);
    const unblocked = await gw.request('POST', `/contacts/${p}/unblock`, { device: String(deviceId) });
    expect(unblocked.body).toMatchObject({ message: 'Contact unblocked', data: { phone: p, blocked: false } });
    expect((await contact(p)).body.data.blocked).toBe(false);
    expect((await gw.request('GET', `/contacts/blocked?device=${device}`)).body.data).not.toContainEqual({ phone: p });
    expect((await gw.request('GET', `/sandbox/phones/${p}`)).body.data.blocked_by).toEqual([]);
  });

  it('records contact.updated when a contact changes name or picture, and the next read shows the change', async () => {
    const [p] = fresh(1) as [string];
    await phone({ phone: p, name: 'Eka', picture_url: 'https://pics.example/e1.jpg' });
    expect((await contact(p)).body.data.name).toBe('Eka');
    await phone({ phone: p, name: 'Eka Putri' });
    const named = await waitFor(
      () => events('contact.updated'),
      (list) => list.some((e) => e.phone === p),
      { what: 'contact.updated (name)' },
    );
    expect(named.filter((e) => e.phone === p)).toEqual([{ phone: p, changes: ['name'], name: 'Eka Putri' }]);
    expect((await contact(p)).body.data.name).toBe('Eka Putri');
    await phone({ phone: p, picture_url: 'https://pics.example/e2.jpg' });
    const pictured = await waitFor(
      async () => (await events('contact.updated')).filter((e) => e.phone === p),
      (list) => list.length === 2,
      { what: 'contact.updated (picture)' },
    );
    expect(pictured[1]).toEqual({ phone: p, changes: ['profile_picture'] });
    expect((await contact(p)).body.data.profile_picture_url).toBe('https://pics.example/e2.jpg');
    // An about text is no name or picture: no event.
    await phone({ phone: p, about: 'new about' });
    await phone({ phone: p, name: 'Eka Putri' });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect((await events('contact.updated')).filter((e) => e.phone === p)).toHaveLength(2);
  });

  it.each([
    ['GET', '/contacts', undefined, 400, 'Validation failed'],
    ['GET', '/contacts?device=abc', undefined, 400, 'Invalid phone number format'],
    ['GET', '/contacts?device=6283699009999', undefined, 404, 'Device not found'],
    ['GET', '/contacts/blocked', undefined, 400, 'Validation failed'],
    ['GET', '/contacts/+6283611112222?device=6283699000001', undefined, 400, 'Invalid phone number format'],
    ['GET', '/contacts/0812?device=6283699000001', undefined, 400, 'Invalid phone number format'],
    ['GET', '/contacts/6283611112222?device=999999', undefined, 404, 'Device not found'],
    ['POST', '/contacts/6283611112222/block', {}, 400, 'Validation failed'],
    ['POST', '/contacts/abc/block', { device: '6283699000001' }, 400, 'Invalid phone number format'],
    ['POST', '/contacts/6283611112222/unblock', { device: '6283699009999' }, 404, 'Device not found'],
  ])('%s %s %j answers %i %s', async (method, url, body, status, message) => {
    const res = await gw.request(method as 'GET', url, body);
    expect(res.status, JSON.stringify(res.body)).toBe(status);
    expect(res.body).toMatchObject({ code: status, message });
  });

  it('answers 404 for another account’s device, and 400 Device not connected for one that is not connected', async () => {
    const other = await gw.app.services.accounts.createAccount('contacts-other');
    const token = (await gw.app.services.accounts.createToken(other.id, 't')).token;
    for (const [method, url, body] of [
      ['GET', `/contacts?device=${device}`, undefined],
      ['GET', `/contacts?device=${deviceId}`, undefined],
      ['GET', `/contacts/6283611112222?device=${device}`, undefined],
      ['POST', '/contacts/6283611112222/block', { device }],
      ['GET', `/contacts/blocked?device=${device}`, undefined],
    ] as const) {
      const res = await gw.request(method, url, body, token);
      expect(res.status, url).toBe(404);
      expect(res.body.message).toBe('Device not found');
    }
    await gw.request('POST', '/devices', { package: 'BETA', name: 'idle', phone: '6283699000002' });
    const idle = await gw.request('GET', '/contacts/6283611112222?device=6283699000002');
    expect(idle.status).toBe(400);
    expect(idle.body.message).toBe('Device not connected');
  });
});
