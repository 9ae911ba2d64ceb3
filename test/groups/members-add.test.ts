// Spec 4.7, 2.6, 7.2, 7.3; docs/internals.md, Groups: adding members in bulk, every outcome code driven through the
// sandbox's magic numbers and group set-up, and every request-level error at its boundary.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { noStoreAvailable, startGateway, type TestGateway } from '../helpers/gateway.js';
import { createPairedDevice } from '../helpers/pairing.js';
import { addMembers, adminGroup, networkGroup, numbers, syncedGroup } from './helpers.js';

const build = { sandbox: { deliveryDelayMs: 5, readDelayMs: 5 } };
const fresh = numbers('62830');

describe.skipIf(noStoreAvailable)('adding members to a group', () => {
  let gw: TestGateway;
  let device: string;
  beforeAll(async () => {
    gw = await startGateway({ build });
    device = (await createPairedDevice(gw, '6283099000001')).phone;
  });
  afterAll(() => gw?.close());

  it('adds every participant: "Members added successfully", names, added_at, new count, and the group shows them', async () => {
    const [member, named, plain] = fresh(3) as [string, string, string];
    const group = await adminGroup(gw, device, 'All in', [member]);
    await gw.request('POST', '/sandbox/phones', { phone: named, name: 'Ana Named' });

    const res = await addMembers(gw, group.id, [named, plain]);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toEqual({
      code: 200,
      status: 200,
      message: 'Members added successfully',
      data: {
        group_id: String(group.id),
        group_name: 'All in',
        added_members: [
          { phone: named, status: 'added', name: 'Ana Named', added_at: expect.any(String) },
          { phone: plain, status: 'added', added_at: expect.any(String) },
        ],
        failed_members: [],
        total_added: 2,
        total_failed: 0,
        new_participant_count: 4,
      },
    });
    expect(Number.isNaN(Date.parse(res.body.data.added_members[0].added_at))).toBe(false);
    expect(res.body.data.added_members[1]).not.toHaveProperty('name');

    const detail = (await gw.request('GET', `/groups/${group.id}`)).body.data;
    expect(detail.participant_count).toBe(4);
    expect(detail.participants).toEqual(
      expect.arrayContaining([
        { phone: device, admin: 'superadmin' },
        { phone: named, name: 'Ana Named', admin: null },
        { phone: plain, admin: null },
      ]),
    );
  });

  it('reports every per-participant error code of spec 7.3 and answers "Some members added successfully"', async () => {
    const [member, ok] = fresh(2) as [string, string];
    const group = await adminGroup(gw, device, 'Mixed', [member]);
    const participants = [
      '6283011110000', // not registered
      '6283011110001', // has blocked every device
      '6283011110002', // privacy forbids group adds
      '6283011110004', // rate-limited by the network
      member, // already in the group
      '+6283011112222', // not digits only
      '0083011112222', // leading zeros
      'not a number',
      ok,
    ];
    const res = await addMembers(gw, group.id, participants);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.code).toBe(200);
    expect(res.body.message).toBe('Some members added successfully');
    const { data } = res.body;
    expect(data.added_members).toEqual([{ phone: ok, status: 'added', added_at: expect.any(String) }]);
    const codes = Object.fromEntries(data.failed_members.map((f: any) => [f.phone, f.error_code]));
    expect(codes).toEqual({
      '6283011110000': 'USER_NOT_FOUND',
      '6283011110001': 'USER_BLOCKED',
      '6283011110002': 'PRIVACY_SETTINGS',
      '6283011110004': 'RATE_LIMITED',
      [member]: 'ALREADY_MEMBER',
      '+6283011112222': 'INVALID_NUMBER',
      '0083011112222': 'INVALID_NUMBER',
      'not a number': 'INVALID_NUMBER',
    });
    for (const failed of data.failed_members) {
      expect(failed.status).toBe('failed');
      expect(typeof failed.error).toBe('string');
      expect(failed.error.length).toBeGreaterThan(0);
    }
    expect(data.total_added).toBe(1);
    expect(data.total_failed).toBe(8);
    expect(data.new_participant_count).toBe(3);
  });

  it('answers "Some members added successfully" with total_added 0 when none could be added', async () => {
    const group = await adminGroup(gw, device, 'Nobody joins', fresh(1));
    const res = await addMembers(gw, group.id, ['6283022220000', 'abc']);
    expect(res.status).toBe(200);
    expect(res.body.message).toBe('Some members added successfully');
    expect(res.body.data).toMatchObject({ total_added: 0, total_failed: 2, new_participant_count: 2 });
  });

  it('records a group.participants_added event with the change when at least one member was added', async () => {
    const other = (await createPairedDevice(gw, '6283099000003')).phone;
    const group = await adminGroup(gw, other, 'Hooked', fresh(1));
    const patched = await gw.request('PATCH', `/devices/${group.device_id}`, {
      webhook_url: 'https://hooks.example.invalid/gateway',
    });
    expect(patched.status).toBe(200);
    const events = () =>
      gw.app.store.db
        .selectFrom('webhook_events')
        .select(['type', 'payload'])
        .where('device_id', '=', group.device_id)
        .where('type', '=', 'group.participants_added')
        .execute();

    const [joiner] = fresh(1) as [string];
    const res = await addMembers(gw, group.id, [joiner, '6283033330000']);
    expect(res.status).toBe(200);
    const recorded = await events();
    expect(recorded).toHaveLength(1);
    expect(JSON.parse(recorded[0]!.payload)).toMatchObject({
      type: 'group.participants_added',
      device: { id: group.device_id, phone: other },
      data: {
        group_id: String(group.id),
        network_id: group.network_id,
        group_name: 'Hooked',
        added_members: [{ phone: joiner, status: 'added' }],
        total_added: 1,
        new_participant_count: 3,
      },
    });

    expect((await addMembers(gw, group.id, ['6283033330000'])).body.data.total_added).toBe(0);
    expect(await events()).toHaveLength(1);
  });

  it('counts duplicates in one request once', async () => {
    const group = await adminGroup(gw, device, 'Dupes', fresh(1));
    const [a, b] = fresh(2) as [string, string];
    const res = await addMembers(gw, group.id, [a, b, a, a, 'x', 'x']);
    expect(res.status).toBe(200);
    expect(res.body.data.added_members.map((m: any) => m.phone)).toEqual([a, b]);
    expect(res.body.data.failed_members).toEqual([
      { phone: 'x', status: 'failed', error: expect.any(String), error_code: 'INVALID_NUMBER' },
    ]);
    expect(res.body.data).toMatchObject({ total_added: 2, total_failed: 1, new_participant_count: 4 });
  });

  it('takes 20 participants and refuses 21 with 400 Validation failed', async () => {
    const group = await adminGroup(gw, device, 'Twenty', fresh(1));
    const twenty = fresh(20);
    const ok = await addMembers(gw, group.id, twenty);
    expect(ok.status).toBe(200);
    expect(ok.body.data.total_added).toBe(20);

    const res = await addMembers(gw, group.id, fresh(21));
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      code: 400,
      status: 400,
      message: 'Validation failed',
      errors: { participants: ['at most 20 participants per request'] },
    });
  });

  it.each([
    ['missing', {}, 'is required and must be an array of phone numbers'],
    ['null', { participants: null }, 'is required and must be an array of phone numbers'],
    ['a string', { participants: '6283012345678' }, 'is required and must be an array of phone numbers'],
    ['an object', { participants: { a: 1 } }, 'is required and must be an array of phone numbers'],
    ['empty', { participants: [] }, 'at least one participant is required'],
  ])('answers 400 Validation failed when participants is %s', async (_label, body, message) => {
    const group = await adminGroup(gw, device, 'Validation', fresh(1));
    const res = await gw.request('POST', `/api/groups/${group.id}/members/add`, body);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      code: 400,
      status: 400,
      message: 'Validation failed',
      errors: { participants: [message] },
    });
  });

  it('answers 400 Validation failed for entries that are not strings, and for a body that is not an object', async () => {
    const group = await adminGroup(gw, device, 'Types', fresh(1));
    const res = await addMembers(gw, group.id, ['6283012345678', 6283012345679, null]);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      code: 400,
      status: 400,
      message: 'Validation failed',
      errors: { 'participants.1': ['must be a string'], 'participants.2': ['must be a string'] },
    });
    const notObject = await gw.request('POST', `/api/groups/${group.id}/members/add`, [1, 2]);
    expect(notObject.status).toBe(400);
    expect(notObject.body.message).toBe('Validation failed');
  });

  it('answers 403 Access denied when the device is a member but not an admin', async () => {
    const created = await networkGroup(gw, 'Not mine to run', [
      { phone: fresh(1)[0]!, admin: true },
      { phone: device },
    ]);
    const group = await syncedGroup(gw, device, created.id);
    expect(group.device_admin).toBeNull();
    const res = await addMembers(gw, group.id, fresh(1));
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ code: 403, status: 403, message: 'Access denied' });
  });

  it('answers 404 Group not found for an unknown id, a non-numeric id and another account’s group', async () => {
    for (const id of ['999999', 'abc', '0', '-1', '1.5']) {
      const res = await gw.request('POST', `/api/groups/${id}/members/add`, { participants: fresh(1) });
      expect(res.status, id).toBe(404);
      // A malformed id also names the parameter, as device ids do.
      expect(res.body).toMatchObject({ code: 404, status: 404, message: 'Group not found' });
    }
    const group = await adminGroup(gw, device, 'Private', fresh(1));
    const other = await gw.app.services.accounts.createAccount('groups-members-other');
    const otherToken = (await gw.app.services.accounts.createToken(other.id, 't')).token;
    const res = await addMembers(gw, group.id, fresh(1), otherToken);
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ code: 404, status: 404, message: 'Group not found' });
  });

  it('is served at /api/groups/{id}/members/add and at /groups/{id}/members/add', async () => {
    const group = await adminGroup(gw, device, 'Both paths', fresh(1));
    const plain = await gw.request('POST', `/groups/${group.id}/members/add`, { participants: fresh(1) });
    expect(plain.status).toBe(200);
    expect(plain.body.message).toBe('Members added successfully');
  });

  describe('capacity (1024 members)', () => {
    // A group of `size` members with the device as its superadmin.
    const groupOf = async (size: number, name: string) => adminGroup(gw, device, name, fresh(size - 1));

    it('takes a group from 1023 to 1024', async () => {
      const group = await groupOf(1023, 'Almost full');
      const res = await addMembers(gw, group.id, fresh(1));
      expect(res.status).toBe(200);
      expect(res.body.message).toBe('Members added successfully');
      expect(res.body.data.new_participant_count).toBe(1024);
    });

    it('fails the rest as GROUP_FULL when 1024 is reached during the request (1023 + 3 would be 1026)', async () => {
      const group = await groupOf(1023, 'Fills up');
      const [first, second, third] = fresh(3) as [string, string, string];
      const res = await addMembers(gw, group.id, [first, second, third]);
      expect(res.status).toBe(200);
      expect(res.body.message).toBe('Some members added successfully');
      expect(res.body.data.added_members.map((m: any) => m.phone)).toEqual([first]);
      expect(res.body.data.failed_members.map((m: any) => [m.phone, m.error_code])).toEqual([
        [second, 'GROUP_FULL'],
        [third, 'GROUP_FULL'],
      ]);
      expect(res.body.data.new_participant_count).toBe(1024);
    });

    it('answers 400 Group capacity exceeded for a group already at 1024 (a 1025th member)', async () => {
      const group = await groupOf(1024, 'Full');
      const res = await addMembers(gw, group.id, fresh(1));
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code: 400, status: 400, message: 'Group capacity exceeded' });
      const detail = (await gw.request('GET', `/groups/${group.id}`)).body.data;
      expect(detail.participant_count).toBe(1024);
    });
  });

  it('answers 400 Device not connected when the group’s device is not connected', async () => {
    const other = (await createPairedDevice(gw, '6283099000002')).phone;
    const group = await adminGroup(gw, other, 'Offline admin', fresh(1));
    const logout = await gw.request('POST', `/devices/${group.device_id}/logout`);
    expect(logout.status).toBe(200);
    const res = await addMembers(gw, group.id, fresh(1));
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ code: 400, status: 400, message: 'Device not connected' });
  });
});
