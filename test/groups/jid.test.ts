// docs/internals.md, Whatspie compatibility: every `{group_id}` route takes the gateway's numeric id or the group's JID (`…@g.us`),
// and `POST /messages` takes a group JID as `receiver` when the device is in the group. With a JID and
// several of the account's devices in the group, `device` says which acts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { noStoreAvailable, startGateway, type TestGateway } from '../helpers/gateway.js';
import { createPairedDevice } from '../helpers/pairing.js';
import { waitFor } from '../helpers/wait.js';
import { networkGroup, numbers, syncedGroup } from './helpers.js';

const build = { sandbox: { deliveryDelayMs: 5, readDelayMs: 5 } };
const fresh = numbers('62835');
const REF_RULE = 'must be a group’s id: the gateway’s number for it, or its network id ending in @g.us';
const SEVERAL = 'several of this account’s devices are in this group: give the number of the one to act';

describe.skipIf(noStoreAvailable)('groups by JID', () => {
  let gw: TestGateway;
  let first: string;
  let second: string;
  beforeAll(async () => {
    gw = await startGateway({ build, config: { sendIntervalMs: 0 } });
    first = (await createPairedDevice(gw, '6283599000001')).phone;
    second = (await createPairedDevice(gw, '6283599000002')).phone;
  });
  afterAll(() => gw?.close());

  const inboxHas = (phone: string, id: string) =>
    waitFor(
      async () => ((await gw.request('GET', `/sandbox/phones/${phone}`)).body.data?.inbox ?? []) as any[],
      (inbox) => inbox.some((entry) => entry.message_id === id),
      { what: `message ${id} in ${phone}'s inbox` },
    ).then((inbox) => inbox.find((entry) => entry.message_id === id));

  it('every group route answers for the JID as for the numeric id', async () => {
    const [member, added] = fresh(2) as [string, string];
    const created = await networkGroup(gw, 'By JID', [{ phone: first, admin: true }, { phone: member }]);
    const group = await syncedGroup(gw, first, created.id);
    const jid = created.id;
    expect(group).toMatchObject({ jid, network_id: jid, title: 'By JID', subject: 'By JID' });

    const byId = await gw.request('GET', `/groups/${group.id}`);
    const byJid = await gw.request('GET', `/groups/${jid}`);
    expect(byJid.status).toBe(200);
    expect(byJid.body).toEqual(byId.body);

    const updated = await gw.request('PUT', `/groups/${jid}`, { device: first, group_id: jid, subject: 'Renamed' });
    expect(updated.status, JSON.stringify(updated.body)).toBe(200);
    expect(updated.body.data).toMatchObject({ id: group.id, title: 'Renamed' });

    const sent = await gw.request('POST', `/groups/${jid}/send`, { type: 'chat', params: { text: 'to the JID' } });
    expect(sent.status, JSON.stringify(sent.body)).toBe(200);
    expect(sent.body.data.receiver).toBe(jid);
    expect(await inboxHas(member, sent.body.data.id)).toMatchObject({ group_id: jid });

    for (const path of [`/api/groups/${jid}/members/add`, `/groups/${jid}/members/add`]) {
      const res = await gw.request('POST', path, {
        device: first,
        participants: [path.startsWith('/api') ? added : member],
      });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.data.group_id).toBe(String(group.id));
    }
  });

  it('POST /messages with a group JID as receiver sends to the group the device is in', async () => {
    const [member] = fresh(1) as [string];
    const created = await networkGroup(gw, 'Receiver', [{ phone: first }, { phone: member }]);
    await syncedGroup(gw, first, created.id);
    const res = await gw.request('POST', '/messages', {
      device: first,
      receiver: created.id,
      type: 'chat',
      params: { text: 'Hello Group' },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data).toMatchObject({ receiver: created.id, status: 'pending', type: 'chat' });
    expect(await inboxHas(member, res.body.data.id)).toMatchObject({ from: first, group_id: created.id });
    // The other device is not in it: as for any group it cannot see.
    const outside = await gw.request('POST', '/messages', {
      device: second,
      receiver: created.id,
      type: 'chat',
      params: { text: 'not a member' },
    });
    expect(outside.status).toBe(404);
    expect(outside.body).toEqual({
      code: 404,
      status: 404,
      message: 'Group not found',
      error: 'the sending device is not in a group with this id',
    });
  });

  it('with several of the account’s devices in the group, a JID needs the device; an id does not', async () => {
    const [member] = fresh(1) as [string];
    const created = await networkGroup(gw, 'Shared', [
      { phone: first, admin: true },
      { phone: second },
      { phone: member },
    ]);
    const mine = await syncedGroup(gw, first, created.id);
    const theirs = await syncedGroup(gw, second, created.id);
    const ambiguous = await gw.request('GET', `/groups/${created.id}`);
    expect(ambiguous.status).toBe(400);
    expect(ambiguous.body).toEqual({
      code: 400,
      status: 400,
      message: 'Validation failed',
      errors: { device: [SEVERAL] },
    });
    const picked = await gw.request('GET', `/groups/${created.id}?device=${second}`);
    expect(picked.body.data).toMatchObject({ id: theirs.id, device: second, device_admin: null });
    const put = await gw.request('PUT', `/groups/${created.id}`, { device: first, description: 'by the admin' });
    expect(put.body.data).toMatchObject({ id: mine.id, description: 'by the admin' });
    const send = await gw.request('POST', `/groups/${created.id}/send`, {
      device: second,
      type: 'chat',
      params: { text: 'from the second device' },
    });
    expect(send.status, JSON.stringify(send.body)).toBe(200);
    expect(send.body.data.device).toBe(second);
    expect((await gw.request('GET', `/groups/${created.id}?device=6283599000009`)).status).toBe(404);
  });

  it.each([
    ['an unknown JID', '120363999999999999@g.us', { code: 404, status: 404, message: 'Group not found' }],
    ['an unknown id', '987654', { code: 404, status: 404, message: 'Group not found' }],
    [
      'a user id',
      '6283599000001@s.whatsapp.net',
      { code: 404, status: 404, message: 'Group not found', errors: { id: [REF_RULE] } },
    ],
    ['letters', 'abc', { code: 404, status: 404, message: 'Group not found', errors: { id: [REF_RULE] } }],
    ['a leading zero', '012', { code: 404, status: 404, message: 'Group not found', errors: { id: [REF_RULE] } }],
  ])('%s is 404 Group not found', async (_label, ref, body) => {
    const res = await gw.request('GET', `/groups/${encodeURIComponent(ref)}`);
    expect(res.status).toBe(404);
    expect(res.body).toEqual(body);
    const add = await gw.request('POST', `/api/groups/${encodeURIComponent(ref)}/members/add`, {
      participants: ['6283599000077'],
    });
    expect(add.status).toBe(404);
    expect(add.body.message).toBe('Group not found');
  });

  it('another account never finds the group by its JID', async () => {
    const created = await networkGroup(gw, 'Private', [{ phone: first }]);
    await syncedGroup(gw, first, created.id);
    // A second account (as the CLI makes one): its token sees none of the first account's groups.
    const other = await gw.app.services.accounts.createAccount('other-jid');
    const secret = await gw.app.services.accounts.createToken(other.id, 'other');
    const res = await gw.request('GET', `/groups/${created.id}`, undefined, secret.token);
    expect(res.status).toBe(404);
  });
});
