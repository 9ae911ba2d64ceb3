// docs/internals.md, Groups; Sending: groups come from the network (synced on connect and on `groups_changed`), each (device, group)
// pair has a numeric id; list, get with participants and roles, create, update, and send to a group.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { noStoreAvailable, startGateway, type TestGateway } from '../helpers/gateway.js';
import { createPairedDevice, waitForDevice } from '../helpers/pairing.js';
import { waitFor } from '../helpers/wait.js';
import { adminGroup, networkGroup, numbers, syncedGroup } from './helpers.js';

const build = {
  sandbox: { deliveryDelayMs: 5, readDelayMs: 5 },
  // Slow enough that a test can act on the network while the device is away.
  connections: { reconnectBaseMs: 400, reconnectMaxMs: 800 },
};
const fresh = numbers('62832');

describe.skipIf(noStoreAvailable)('groups', () => {
  let gw: TestGateway;
  let device: string;
  let deviceId: number;
  beforeAll(async () => {
    gw = await startGateway({ build, config: { sendIntervalMs: 0 } });
    const paired = await createPairedDevice(gw, '6283299000001');
    device = paired.phone;
    deviceId = paired.id;
  });
  afterAll(() => gw?.close());

  it('syncs a group created on the network (groups_changed) into GET /groups, with a numeric id', async () => {
    const [admin, member] = fresh(2) as [string, string];
    await gw.request('POST', '/sandbox/phones', { phone: admin, name: 'Admin Person' });
    const created = await networkGroup(gw, 'From the network', [
      { phone: admin, admin: true },
      { phone: device, admin: true },
      { phone: member },
    ]);
    const group = await syncedGroup(gw, device, created.id);
    expect(group).toEqual({
      id: expect.any(Number),
      device,
      device_id: deviceId,
      network_id: created.id,
      subject: 'From the network',
      description: null,
      participant_count: 3,
      capacity: 1024,
      device_admin: 'admin',
      created_at: expect.any(String),
      synced_at: expect.any(String),
      // docs/internals.md, Whatspie compatibility: the names Whatspie clients read, and the settings as the network reports them.
      jid: created.id,
      title: 'From the network',
      permissions: { only_admins_can_send: false, only_admins_can_edit: true },
      disappearing_messages: { enabled: false, duration: null },
    });

    const detail = await gw.request('GET', `/groups/${group.id}`);
    expect(detail.status).toBe(200);
    expect(detail.body.code).toBe(200);
    expect(detail.body.data.participants).toEqual([
      { phone: admin, name: 'Admin Person', admin: 'superadmin' },
      { phone: device, admin: 'admin' },
      { phone: member, admin: null },
    ]);
    // Also without the device filter, and under /api.
    const all = await gw.request('GET', '/api/groups');
    expect(all.body.data.map((g: any) => g.id)).toContain(group.id);
    expect(all.body.meta).toMatchObject({ page: 1, per_page: 20 });
  });

  it('syncs the whole list when a device connects: groups made while it was away appear, its id is kept', async () => {
    const kept = await adminGroup(gw, device, 'Kept', fresh(1));
    await gw.request('POST', `/sandbox/devices/${deviceId}/disconnect`, {});
    await waitForDevice(gw, deviceId, (d) => d.connected === false, 'disconnected');
    // No open connection hears `groups_changed` for this one: only the sync on reconnect can find it.
    const created = await networkGroup(gw, 'Made while away', [{ phone: device }, { phone: fresh(1)[0]! }]);
    expect((await gw.request('GET', `/devices/${deviceId}`)).body.data.connected).toBe(false);
    const group = await syncedGroup(gw, device, created.id);
    await waitForDevice(gw, deviceId, (d) => d.connected === true, 'reconnected');
    expect(group.device_admin).toBeNull();
    const list = (await gw.request('GET', `/groups?device=${device}&per_page=100`)).body.data;
    expect(list.find((g: any) => g.network_id === kept.network_id).id).toBe(kept.id);
  });

  it('creates a group: the device is superadmin, refused numbers are left out, and it is listed at once', async () => {
    const [a, b] = fresh(2) as [string, string];
    const res = await gw.request('POST', '/groups', {
      device,
      name: 'Created here',
      participants: [a, b, a, '6283255550000', '6283255550001', '6283255550002', '6283255550002'],
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body).toMatchObject({ code: 201, status: 201, message: 'Group created' });
    const group = res.body.data;
    expect(group).toMatchObject({ subject: 'Created here', device, device_admin: 'superadmin', participant_count: 3 });
    expect(group.participants).toEqual([
      { phone: device, admin: 'superadmin' },
      { phone: a, admin: null },
      { phone: b, admin: null },
    ]);
    // Who was left out, and why, in the items of members add's `failed_members`; a repeated number once.
    expect(group.failed_participants).toEqual([
      {
        phone: '6283255550000',
        status: 'failed',
        error: 'Number not registered on the network',
        error_code: 'USER_NOT_FOUND',
      },
      { phone: '6283255550001', status: 'failed', error: 'User has blocked the device', error_code: 'USER_BLOCKED' },
      {
        phone: '6283255550002',
        status: 'failed',
        error: "User's privacy settings prevent adding",
        error_code: 'PRIVACY_SETTINGS',
      },
    ]);
    expect((await gw.request('GET', `/groups/${group.id}`)).body.data).not.toHaveProperty('failed_participants');
    const list = (await gw.request('GET', `/groups?device=${device}&per_page=100`)).body.data;
    expect(list.filter((g: any) => g.id === group.id)).toHaveLength(1);
  });

  it.each([
    [{ name: 'x', participants: [] }, 400, 'Validation failed'],
    [{ device: '6283299000001', participants: [] }, 400, 'Validation failed'],
    [{ device: '+6283299000001', name: 'x', participants: [] }, 400, 'Invalid phone number format'],
    [{ device: '6283299000001', name: 'x', participants: ['12'] }, 400, 'Invalid phone number format'],
    [{ device: '6283299000001', name: '', participants: [] }, 400, 'Validation failed'],
    [{ device: '6283299000001', name: '   ', participants: [] }, 400, 'Validation failed'],
    [{ device: '6283299009999', name: 'x', participants: [] }, 404, 'Device not found'],
  ])('refuses a bad create %j with %i %s', async (body, status, message) => {
    const res = await gw.request('POST', '/groups', body);
    expect(res.status).toBe(status);
    expect(res.body).toMatchObject({ code: status, message });
  });

  it('updates subject and description (PUT), and refuses a device that is not an admin', async () => {
    const group = await adminGroup(gw, device, 'Old name', fresh(1));
    const res = await gw.request('PUT', `/groups/${group.id}`, { subject: 'New name', description: 'About us' });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({
      code: 200,
      status: 200,
      message: 'Group updated',
      data: { id: group.id, subject: 'New name', description: 'About us' },
    });
    expect((await gw.request('GET', `/groups/${group.id}`)).body.data.subject).toBe('New name');

    const empty = await gw.request('PUT', `/groups/${group.id}`, {});
    expect(empty.status).toBe(400);
    expect(empty.body.message).toBe('Validation failed');

    const created = await networkGroup(gw, 'Member only', [{ phone: fresh(1)[0]!, admin: true }, { phone: device }]);
    const notAdmin = await syncedGroup(gw, device, created.id);
    const refused = await gw.request('PUT', `/groups/${notAdmin.id}`, { subject: 'Mine now' });
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ code: 403, status: 403, message: 'Access denied' });
  });

  it('refuses a blank subject on PUT, naming it', async () => {
    const group = await adminGroup(gw, device, 'Keeps its name', fresh(1));
    const res = await gw.request('PUT', `/groups/${group.id}`, { subject: ' \t ' });
    expect(res.body).toEqual({
      code: 400,
      status: 400,
      message: 'Validation failed',
      errors: { subject: ['must not be blank'] },
    });
    expect((await gw.request('GET', `/groups/${group.id}`)).body.data.subject).toBe('Keeps its name');
  });

  it('refuses a group send that names a receiver, and sends nothing', async () => {
    const group = await adminGroup(gw, device, 'No DMs here', fresh(1));
    const before = (await gw.request('GET', `/devices/${deviceId}`)).body.data.quote_used;
    for (const receiver of ['6289876543210', null, '']) {
      const res = await gw.request('POST', `/groups/${group.id}/send`, {
        receiver,
        type: 'chat',
        params: { text: 'meant for one chat' },
      });
      expect(res.status, JSON.stringify(receiver)).toBe(400);
      expect(res.body).toEqual({
        code: 400,
        status: 400,
        message: 'Validation failed',
        errors: { receiver: ['a group send goes to the group; send to one chat with POST /messages'] },
      });
    }
    expect((await gw.request('GET', `/devices/${deviceId}`)).body.data.quote_used).toBe(before);
  });

  it('sends to a group: accepted like /messages, and every member’s inbox gets it with the group id', async () => {
    const others = fresh(3);
    const group = await adminGroup(gw, device, 'Broadcast', others);
    const res = await gw.request('POST', `/groups/${group.id}/send`, { type: 'chat', params: { text: 'Hello all' } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({
      code: 200,
      status: 200,
      message: 'Message sent successfully',
      data: { status: 'pending', type: 'chat', device, receiver: group.network_id, message: 'Hello all' },
    });
    const id = res.body.data.id;
    for (const member of others) {
      const inbox = await waitFor(
        async () => (await gw.request('GET', `/sandbox/phones/${member}`)).body.data?.inbox ?? [],
        (entries: any[]) => entries.some((e) => e.message_id === id),
        { what: `${member} received the group message` },
      );
      expect(inbox.find((e: any) => e.message_id === id)).toMatchObject({
        from: device,
        group_id: group.network_id,
        type: 'chat',
        content: { text: 'Hello all' },
      });
    }
    await waitFor(
      async () => (await gw.request('GET', `/messages/${id}`)).body.data.status,
      (status) => status === 'delivered',
      { what: 'group message delivered' },
    );

    // The body may name the device; it must be the group's.
    const named = await gw.request('POST', `/api/groups/${group.id}/send`, {
      device,
      type: 'chat',
      params: { text: 'again' },
    });
    expect(named.status).toBe(200);
    const wrong = await gw.request('POST', `/groups/${group.id}/send`, {
      device: '6283299008888',
      type: 'chat',
      params: { text: 'x' },
    });
    expect(wrong.status).toBe(400);
    expect(wrong.body).toMatchObject({
      code: 400,
      status: 400,
      message: 'Validation failed',
      errors: { device: expect.any(Array) },
    });
    const invalid = await gw.request('POST', `/groups/${group.id}/send`, { type: 'nope' });
    expect(invalid.status).toBe(400);
    expect(invalid.body.message).toBe('Invalid message type');
  });

  it('takes a quota unit for a group send', async () => {
    const group = await adminGroup(gw, device, 'Quota', fresh(2));
    const used = async () =>
      Number((await gw.request('GET', `/devices/${deviceId}`)).body.data.subscription.quote_used as string);
    const before = await used();
    expect((await gw.request('POST', `/groups/${group.id}/send`, { type: 'chat', message: 'one' })).status).toBe(200);
    expect(await used()).toBe(before + 1);
  });

  it('answers 404 Group not found for unknown ids and for another account’s group on every group route', async () => {
    const group = await adminGroup(gw, device, 'Hidden', fresh(1));
    const other = await gw.app.services.accounts.createAccount('groups-other');
    const otherToken = (await gw.app.services.accounts.createToken(other.id, 't')).token;
    for (const [method, url, body] of [
      ['GET', `/groups/${group.id}`, undefined],
      ['PUT', `/groups/${group.id}`, { subject: 'x' }],
      ['POST', `/groups/${group.id}/send`, { type: 'chat', message: 'x' }],
      ['POST', `/api/groups/${group.id}/members/add`, { participants: ['6283212345678'] }],
    ] as const) {
      const res = await gw.request(method, url, body, otherToken);
      expect(res.status, `${method} ${url}`).toBe(404);
      expect(res.body).toEqual({ code: 404, status: 404, message: 'Group not found' });
    }
    expect((await gw.request('GET', '/groups', undefined, otherToken)).body.data).toEqual([]);
    expect((await gw.request('GET', `/groups?device=${device}`, undefined, otherToken)).body).toEqual({
      code: 404,
      status: 404,
      message: 'Device not found',
    });
    expect((await gw.request('GET', '/groups/987654')).body).toEqual({
      code: 404,
      status: 404,
      message: 'Group not found',
    });
    expect((await gw.request('GET', '/groups?device=abc')).body).toMatchObject({
      code: 400,
      status: 400,
      message: 'Invalid phone number format',
    });
  });

  it('documents members add at /api/groups/{group_id}/members/add, every other route without /api', async () => {
    const doc = (await gw.request('GET', '/openapi.json', undefined, null)).body;
    const paths = Object.keys(doc.paths);
    expect(paths).toEqual(
      expect.arrayContaining([
        '/api/groups/{group_id}/members/add',
        '/groups',
        '/groups/{id}',
        '/groups/{id}/send',
        '/contacts/check',
      ]),
    );
    expect(paths).not.toContain('/groups/{group_id}/members/add');
    expect(paths.filter((path) => path.startsWith('/api/'))).toEqual(['/api/groups/{group_id}/members/add']);
    const add = doc.paths['/api/groups/{group_id}/members/add'].post;
    expect(Object.keys(add.responses)).toEqual(expect.arrayContaining(['200', '400', '403', '404', '429']));
  });
});
