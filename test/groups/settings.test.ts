// docs/internals.md, Whatspie compatibility: `PUT /groups/{id}` takes `permissions` and `disappearing_messages`, carried out on the
// network; the group object shows them; the sandbox enforces only_admins_can_send on its members' posts;
// a setting the network refuses is a 400 naming it, never a silent 200.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { noStoreAvailable, startGateway, type TestGateway } from '../helpers/gateway.js';
import { createPairedDevice } from '../helpers/pairing.js';
import { waitFor } from '../helpers/wait.js';
import { networkGroup, numbers, syncedGroup } from './helpers.js';

const build = { sandbox: { deliveryDelayMs: 5, readDelayMs: 5 } };
const fresh = numbers('62834');

describe.skipIf(noStoreAvailable)('group settings', () => {
  let gw: TestGateway;
  let admin: string;
  let member: string;
  beforeAll(async () => {
    gw = await startGateway({ build, config: { sendIntervalMs: 0 } });
    admin = (await createPairedDevice(gw, '6283499000001')).phone;
    member = (await createPairedDevice(gw, '6283499000002')).phone;
  });
  afterAll(() => gw?.close());

  /** A network group with the admin device as admin, the member device as a plain member. */
  async function twoDeviceGroup(name: string) {
    const [phone] = fresh(1) as [string];
    const created = await networkGroup(gw, name, [{ phone: admin, admin: true }, { phone: member }, { phone }]);
    return {
      asAdmin: await syncedGroup(gw, admin, created.id),
      asMember: await syncedGroup(gw, member, created.id),
      phone,
    };
  }
  const put = (id: number, body: Record<string, unknown>) => gw.request('PUT', `/groups/${id}`, body);

  it('changes permissions and disappearing messages on the network and shows them', async () => {
    const { asAdmin, asMember } = await twoDeviceGroup('Settings');
    expect(asAdmin).toMatchObject({
      permissions: { only_admins_can_send: false, only_admins_can_edit: true },
      disappearing_messages: { enabled: false, duration: null },
    });
    const res = await put(asAdmin.id, {
      permissions: { only_admins_can_send: true, only_admins_can_edit: false },
      disappearing_messages: { enabled: true, duration: '90d' },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ code: 200, status: 200, message: 'Group updated' });
    expect(res.body.data).toMatchObject({
      permissions: { only_admins_can_send: true, only_admins_can_edit: false },
      disappearing_messages: { enabled: true, duration: '90d' },
    });
    // The network has it: the other device's view follows.
    await waitFor(
      async () => (await gw.request('GET', `/groups/${asMember.id}`)).body.data,
      (group) => group.permissions?.only_admins_can_send === true && group.disappearing_messages?.duration === '90d',
      { what: 'the member device synced the settings' },
    );
    const off = await put(asAdmin.id, { disappearing_messages: { enabled: false, duration: '24h' } });
    expect(off.body.data.disappearing_messages).toEqual({ enabled: false, duration: null });
    const day = await put(asAdmin.id, { disappearing_messages: { enabled: true, duration: '24h' } });
    expect(day.body.data.disappearing_messages).toEqual({ enabled: true, duration: '24h' });
  });

  it('only admins can send: a plain member’s post fails on the network, an admin’s is delivered', async () => {
    const { asAdmin, asMember, phone } = await twoDeviceGroup('Announcements');
    expect((await put(asAdmin.id, { permissions: { only_admins_can_send: true } })).status).toBe(200);
    const post = (group: { id: number }) =>
      gw.request('POST', `/groups/${group.id}/send`, { type: 'chat', params: { text: 'hello all' } });
    const refused = await post(asMember);
    expect(refused.status).toBe(200);
    const failed = await waitFor(
      async () => (await gw.request('GET', `/messages/${refused.body.data.id}`)).body.data,
      (m) => m.status !== 'pending',
      { what: 'the member’s post settled' },
    );
    expect(failed).toMatchObject({
      status: 'failed',
      failed_reason: expect.stringContaining('only administrators can send messages to this group'),
    });
    const allowed = await post(asAdmin);
    await waitFor(
      async () => (await gw.request('GET', `/sandbox/phones/${phone}`)).body.data?.inbox ?? [],
      (inbox: any[]) => inbox.some((entry) => entry.message_id === allowed.body.data.id),
      { what: 'the admin’s post delivered' },
    );
    // Open again: the member may post.
    expect((await put(asAdmin.id, { permissions: { only_admins_can_send: false } })).status).toBe(200);
    const again = await post(asMember);
    await waitFor(
      async () => (await gw.request('GET', `/messages/${again.body.data.id}`)).body.data.status,
      (status) => status === 'sent' || status === 'delivered',
      { what: 'the member’s post sent' },
    );
  });

  it('a member who may change nothing asked is 403 Access denied; nothing changes', async () => {
    const { asMember } = await twoDeviceGroup('Locked');
    const res = await put(asMember.id, { permissions: { only_admins_can_send: true } });
    expect(res.status).toBe(403);
    expect(res.body).toEqual({
      code: 403,
      status: 403,
      message: 'Access denied',
      error: 'the device is not an administrator of the group',
    });
    expect((await gw.request('GET', `/groups/${asMember.id}`)).body.data.permissions.only_admins_can_send).toBe(false);
  });

  it('a setting the network refuses after others went through is 400 Group setting refused naming it', async () => {
    const { asAdmin, asMember } = await twoDeviceGroup('Open to edit');
    // Everyone may edit the group's info now; who may post stays an admin's to set.
    expect((await put(asAdmin.id, { permissions: { only_admins_can_edit: false } })).status).toBe(200);
    await waitFor(
      async () => (await gw.request('GET', `/groups/${asMember.id}`)).body.data.permissions,
      (permissions) => permissions?.only_admins_can_edit === false,
      { what: 'the member device synced' },
    );
    const res = await put(asMember.id, {
      subject: 'Renamed by a member',
      disappearing_messages: { enabled: true, duration: '7d' },
      permissions: { only_admins_can_send: true },
    });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      code: 400,
      status: 400,
      message: 'Group setting refused',
      error: 'changed before the refusal: subject, disappearing_messages',
      errors: { 'permissions.only_admins_can_send': ['only an administrator of the group can change this'] },
    });
    // What the network did change is stored and shown; what it refused is not.
    const after = (await gw.request('GET', `/groups/${asMember.id}`)).body.data;
    expect(after).toMatchObject({
      subject: 'Renamed by a member',
      title: 'Renamed by a member',
      disappearing_messages: { enabled: true, duration: '7d' },
      permissions: { only_admins_can_send: false, only_admins_can_edit: false },
    });
  });

  it.each([
    [
      { disappearing_messages: { enabled: true } },
      { 'disappearing_messages.duration': ['is required when enabled is true'] },
    ],
    [
      { disappearing_messages: { enabled: true, duration: '30d' } },
      { 'disappearing_messages.duration': ['must be one of: 24h, 7d, 90d'] },
    ],
    [{ disappearing_messages: { duration: '7d' } }, { 'disappearing_messages.enabled': ['is required'] }],
    [{ permissions: { only_admins_can_send: 'yes' } }, { 'permissions.only_admins_can_send': ['must be a boolean'] }],
    [{ permissions: {} }, { body: ['give subject, description, permissions or disappearing_messages'] }],
    [{}, { body: ['give subject, description, permissions or disappearing_messages'] }],
  ])('refuses %j with 400 Validation failed naming the field', async (body, errors) => {
    const { asAdmin } = await twoDeviceGroup('Validation');
    const res = await put(asAdmin.id, body);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ code: 400, status: 400, message: 'Validation failed', errors });
  });
});
