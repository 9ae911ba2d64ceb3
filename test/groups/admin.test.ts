// DECISIONS 16: group administration through the sandbox, end to end: remove, promote and demote with an outcome
// per participant, the invite link (get, revoke), join by link or code, leave, the events each records, and every
// request-level error at its boundary.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { noStoreAvailable, startGateway, type TestGateway } from '../helpers/gateway.js';
import { createPairedDevice } from '../helpers/pairing.js';
import { waitFor } from '../helpers/wait.js';
import { adminGroup, networkGroup, numbers, syncedGroup } from './helpers.js';
import { recordedEvents } from '../events/helpers.js';

const build = { sandbox: { deliveryDelayMs: 5, readDelayMs: 5 } };
const fresh = numbers('62831');

describe.skipIf(noStoreAvailable)('group administration', () => {
  let gw: TestGateway;
  let device: string;
  let second: string;
  beforeAll(async () => {
    gw = await startGateway({ build });
    device = (await createPairedDevice(gw, '6283199000001')).phone;
    second = (await createPairedDevice(gw, '6283199000002')).phone;
  });
  afterAll(() => gw?.close());

  /** The events of a type the device recorded, oldest first, as their standard bodies. */
  const events = (deviceId: number, type: string) => recordedEvents(gw, deviceId, type);
  const hooked = async (deviceId: number) => {
    const patched = await gw.request('PATCH', `/devices/${deviceId}`, {
      webhook_url: 'https://hooks.example.invalid/gateway',
    });
    expect(patched.status).toBe(200);
  };
  const detail = async (id: number) => (await gw.request('GET', `/groups/${id}`)).body.data;

  it('removes members: an outcome per participant, the group shows the change, and group.participants_removed', async () => {
    const [a, b, outsider] = fresh(3) as [string, string, string];
    const group = await adminGroup(gw, device, 'Remove some', [a, b]);
    await hooked(group.device_id);

    const res = await gw.request('POST', `/groups/${group.id}/members/remove`, {
      participants: [a, outsider, 'not a number', a],
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toEqual({
      code: 200,
      status: 200,
      message: 'Members removed',
      data: {
        succeeded: [a],
        failed: [
          { phone: outsider, error_code: 'NOT_A_MEMBER' },
          { phone: 'not a number', error_code: 'INVALID_NUMBER' },
        ],
      },
    });
    const after = await detail(group.id);
    expect(after.participant_count).toBe(2);
    expect(after.participants.map((p: { phone: string }) => p.phone).sort()).toEqual([device, b].sort());

    const recorded = (await events(group.device_id, 'group.participants_removed')).filter(
      (e) => e.data.network_id === group.network_id,
    );
    expect(recorded).toHaveLength(1);
    expect(recorded[0]!.data).toEqual({
      group_id: String(group.id),
      network_id: group.network_id,
      group_name: 'Remove some',
      participants: [a],
      by: device,
    });
  });

  it('promotes and demotes; the creator can be neither removed nor demoted (FORBIDDEN)', async () => {
    const [a] = fresh(1) as [string];
    const group = await adminGroup(gw, device, 'Roles', [a]);
    await hooked(group.device_id);

    const promoted = await gw.request('POST', `/groups/${group.id}/members/promote`, { participants: [a] });
    expect(promoted.status).toBe(200);
    expect(promoted.body.message).toBe('Members promoted');
    expect(promoted.body.data).toEqual({ succeeded: [a], failed: [] });
    expect((await detail(group.id)).participants).toContainEqual({ phone: a, admin: 'admin' });

    const demoted = await gw.request('POST', `/groups/${group.id}/members/demote`, { participants: [a, device] });
    expect(demoted.status).toBe(200);
    expect(demoted.body.message).toBe('Members demoted');
    expect(demoted.body.data).toEqual({ succeeded: [a], failed: [{ phone: device, error_code: 'FORBIDDEN' }] });
    expect((await detail(group.id)).participants).toContainEqual({ phone: a, admin: null });

    const removeCreator = await gw.request('POST', `/groups/${group.id}/members/remove`, { participants: [device] });
    expect(removeCreator.body.data).toEqual({ succeeded: [], failed: [{ phone: device, error_code: 'FORBIDDEN' }] });

    const ofGroup = async (type: string) =>
      (await events(group.device_id, type))
        .filter((e) => e.data.network_id === group.network_id)
        .map((e) => e.data.participants);
    expect(await ofGroup('group.participants_promoted')).toEqual([[a]]);
    expect(await ofGroup('group.participants_demoted')).toEqual([[a]]);
    // Nothing changed: no event.
    const removed = await events(group.device_id, 'group.participants_removed');
    expect(removed.filter((e) => e.data.network_id === group.network_id)).toHaveLength(0);
  });

  it('refuses a device that is not an administrator: 403 Access denied, nothing changed', async () => {
    const [a] = fresh(1) as [string];
    const created = await networkGroup(gw, 'Not mine', [{ phone: a, admin: true }, { phone: device }]);
    const group = await syncedGroup(gw, device, created.id);
    for (const path of ['members/remove', 'members/promote', 'members/demote']) {
      const res = await gw.request('POST', `/groups/${group.id}/${path}`, { participants: [a] });
      expect(res.status, path).toBe(403);
      expect(res.body.message).toBe('Access denied');
    }
    expect((await gw.request('GET', `/groups/${group.id}/invite-link`)).status).toBe(403);
    expect((await detail(group.id)).participants).toContainEqual({ phone: a, admin: 'superadmin' });
  });

  it('checks participants first: 400 Validation failed naming the field; another account’s group is 404', async () => {
    const group = await adminGroup(gw, device, 'Checks', fresh(1));
    for (const participants of [undefined, [], 'x', Array.from({ length: 21 }, (_, i) => `62831777${i}`), [1]]) {
      const res = await gw.request('POST', `/groups/${group.id}/members/remove`, { participants });
      expect(res.status, JSON.stringify(participants)).toBe(400);
      expect(res.body.message).toBe('Validation failed');
      expect(Object.keys(res.body.errors)[0]).toMatch(/^participants/);
    }
    const missing = await gw.request('POST', '/groups/999999/members/promote', { participants: ['6283100000100'] });
    expect(missing.status).toBe(404);
    expect(missing.body.message).toBe('Group not found');

    const account = await gw.app.services.accounts.createAccount('group-admin-other');
    const other = (await gw.app.services.accounts.createToken(account.id, 't')).token;
    for (const [method, url, body] of [
      ['POST', `/groups/${group.id}/members/remove`, { participants: ['6283100000100'] }],
      ['POST', `/groups/${group.id}/members/promote`, { participants: ['6283100000100'] }],
      ['POST', `/groups/${group.id}/members/demote`, { participants: ['6283100000100'] }],
      ['GET', `/groups/${group.id}/invite-link`, undefined],
      ['POST', `/groups/${group.id}/invite-link/revoke`, undefined],
      ['POST', `/groups/${group.id}/leave`, undefined],
      ['POST', '/groups/join', { device, invite: 'AbCdEfGhIjKl' }],
    ] as const) {
      const res = await gw.request(method, url, body, other);
      expect(res.status, `${method} ${url}`).toBe(404);
    }
  });

  it('invite link: get twice the same, revoke makes a new one; another device joins by link, the old one is 404', async () => {
    const group = await adminGroup(gw, device, 'Join us', fresh(1));
    const first = await gw.request('GET', `/groups/${group.id}/invite-link`);
    expect(first.status).toBe(200);
    expect(first.body.message).toBe('Invite link retrieved');
    expect(first.body.data.invite_link).toMatch(/^https:\/\/chat\.whatsapp\.com\/[A-Za-z0-9_-]{22}$/);
    expect((await gw.request('GET', `/groups/${group.id}/invite-link`)).body.data).toEqual(first.body.data);

    const revoked = await gw.request('POST', `/groups/${group.id}/invite-link/revoke`);
    expect(revoked.status).toBe(200);
    expect(revoked.body.message).toBe('Invite link revoked');
    expect(revoked.body.data.invite_link).not.toBe(first.body.data.invite_link);

    const stale = await gw.request('POST', '/groups/join', { device: second, invite: first.body.data.invite_link });
    expect(stale.status).toBe(404);
    expect(stale.body.message).toBe('Group not found');

    const secondId = (await gw.request('GET', `/devices?per_page=100`)).body.data.find(
      (d: { phone: string }) => d.phone === second,
    ).id;
    await hooked(secondId);
    const joined = await gw.request('POST', '/groups/join', { device: second, invite: revoked.body.data.invite_link });
    expect(joined.status, JSON.stringify(joined.body)).toBe(200);
    expect(joined.body.message).toBe('Group joined');
    expect(joined.body.data).toMatchObject({ network_id: group.network_id, subject: 'Join us', device_id: secondId });
    expect(joined.body.data.participants).toContainEqual({ phone: second, admin: null });
    const [event] = await events(secondId, 'group.joined');
    expect(event!.data).toEqual({
      group_id: String(joined.body.data.id),
      network_id: group.network_id,
      group_name: 'Join us',
      by: second,
    });

    // The bare code works as well, and joining again answers the group as it is.
    const code = revoked.body.data.invite_link.split('/').pop();
    const again = await gw.request('POST', '/groups/join', { device: second, invite: code });
    expect(again.status).toBe(200);
    expect(again.body.data.id).toBe(joined.body.data.id);

    // The admin's device sees the new member after its sync.
    await waitFor(
      async () => (await detail(group.id)).participants,
      (participants: Array<{ phone: string }>) => participants.some((p) => p.phone === second),
      { what: 'the joiner in the admin device’s group' },
    );
  });

  it('join refuses bad input: 400 naming device or invite; an unknown device is 404', async () => {
    for (const [body, field] of [
      [{ invite: 'https://chat.whatsapp.com/AbCdEfGhIjKlMnOpQrStUv' }, 'device'],
      [{ device: second }, 'invite'],
      [{ device: second, invite: 'https://example.com/AbCdEf' }, 'invite'],
      [{ device: second, invite: 'has spaces in it' }, 'invite'],
      [{ device: second, invite: 42 }, 'invite'],
    ] as const) {
      const res = await gw.request('POST', '/groups/join', body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.message).toBe('Validation failed');
      expect(res.body.errors).toHaveProperty(field);
    }
    const unknown = await gw.request('POST', '/groups/join', { device: '6283199999999', invite: 'AbCdEfGhIjKl' });
    expect(unknown.status).toBe(404);
    expect(unknown.body.message).toBe('Device not found');
  });

  it('leave: 200, the group leaves the list, group.left is recorded, and leaving again is 404', async () => {
    const [a] = fresh(1) as [string];
    const group = await adminGroup(gw, device, 'Goodbye', [a]);
    await hooked(group.device_id);
    const res = await gw.request('POST', `/groups/${group.id}/leave`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toEqual({ code: 200, status: 200, message: 'Left the group', data: null });
    const list = (await gw.request('GET', `/groups?device=${device}&per_page=100`)).body.data;
    expect(list.some((g: { id: number }) => g.id === group.id)).toBe(false);
    expect((await gw.request('GET', `/groups/${group.id}`)).status).toBe(404);
    const [event] = (await events(group.device_id, 'group.left')).filter((e) => e.data.network_id === group.network_id);
    expect(event!.data).toEqual({
      group_id: String(group.id),
      network_id: group.network_id,
      group_name: 'Goodbye',
      by: device,
    });
    expect((await gw.request('POST', `/groups/${group.id}/leave`)).status).toBe(404);
  });
});
