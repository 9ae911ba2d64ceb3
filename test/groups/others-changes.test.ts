// DECISIONS 16 (docs/groups.md, Events): group.updated when anyone changes a group's subject, description, settings
// or picture (once per change, also for the gateway's own change and its echo), participants removed, promoted or
// demoted by someone else, and PUT /groups/{id}/picture; the group a client reads on the event already shows it.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { noStoreAvailable, startGateway, type TestGateway } from '../helpers/gateway.js';
import { createPairedDevice } from '../helpers/pairing.js';
import { waitFor } from '../helpers/wait.js';
import { networkGroup, numbers, syncedGroup } from './helpers.js';
import { recordedEvents } from '../events/helpers.js';

const fresh = numbers('62837');
const PNG = Buffer.from('89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489', 'hex');
const GIF = Buffer.from('GIF89a-not-a-picture');

describe.skipIf(noStoreAvailable)('group changes seen on the network', () => {
  let gw: TestGateway;
  let device: string;
  let server: Server;
  let base: string;
  beforeAll(async () => {
    server = createServer((req, res) => {
      if (req.url === '/p.png') res.writeHead(200, { 'content-type': 'image/png' }).end(PNG);
      else if (req.url === '/p.gif') res.writeHead(200, { 'content-type': 'image/png' }).end(GIF);
      else res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    gw = await startGateway({
      config: { allowPrivateUrls: true },
      build: { sandbox: { deliveryDelayMs: 5, readDelayMs: 5 } },
    });
    device = (await createPairedDevice(gw, '6283799000001')).phone;
  });
  afterAll(async () => {
    await gw?.close();
    await new Promise((resolve) => server?.close(resolve));
  });

  const events = async (deviceId: number, type: string, groupId: number) => {
    return (await recordedEvents(gw, deviceId, type))
      .map((e) => e.data)
      .filter((data) => data.group_id === String(groupId));
  };
  const settle = async () => {
    await new Promise((resolve) => setTimeout(resolve, 30));
    await gw.app.services.groupSync.idle();
  };
  /** A group with the device (admin), an admin phone and a member phone; synced and hooked. */
  const setUp = async (name: string) => {
    const [admin, member] = fresh(2) as [string, string];
    const created = await networkGroup(gw, name, [
      { phone: device, admin: true },
      { phone: admin, admin: true },
      { phone: member },
    ]);
    const group = await syncedGroup(gw, device, created.id);
    const hooked = await gw.request('PATCH', `/devices/${group.device_id}`, {
      webhook_url: 'https://hooks.example.invalid/g',
    });
    expect(hooked.status).toBe(200);
    return { group, admin, member, networkId: created.id as string };
  };
  const byPhone = (phone: string, body: Record<string, unknown>) =>
    gw.request('POST', `/sandbox/phones/${phone}/group-changes`, body);

  it('records group.updated once when another member changes the subject and description; the group shows them', async () => {
    const { group, admin, networkId } = await setUp('Before');
    const changed = await byPhone(admin, { group_id: networkId, subject: 'After', description: 'Now with rules' });
    expect(changed.status, JSON.stringify(changed.body)).toBe(200);
    const recorded = await waitFor(
      () => events(group.device_id, 'group.updated', group.id),
      (list) => list.length > 0,
      { what: 'group.updated' },
    );
    expect(recorded).toEqual([
      {
        group_id: String(group.id),
        network_id: networkId,
        group_name: 'After',
        changes: { subject: 'After', description: 'Now with rules' },
        by: admin,
      },
    ]);
    const read = (await gw.request('GET', `/groups/${group.id}`)).body.data;
    expect(read).toMatchObject({ subject: 'After', description: 'Now with rules' });
    await settle();
    expect(await events(group.device_id, 'group.updated', group.id)).toHaveLength(1);
  });

  it('records one group.updated for the gateway’s own change, not a second for the network’s echo', async () => {
    const { group } = await setUp('Own');
    const res = await gw.request('PUT', `/groups/${group.id}`, { subject: 'Own renamed' });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    await waitFor(
      () => events(group.device_id, 'group.updated', group.id),
      (list) => list.length > 0,
      { what: 'group.updated' },
    );
    await settle();
    const recorded = await events(group.device_id, 'group.updated', group.id);
    expect(recorded).toHaveLength(1);
    expect(recorded[0]).toMatchObject({ changes: { subject: 'Own renamed' } });
  });

  it('records participants removed, promoted and demoted by someone else, once each, with who did it', async () => {
    const { group, admin, member } = await setUp('Members');
    expect(
      (await byPhone(admin, { group_id: group.network_id, action: 'promote', participants: [member] })).status,
    ).toBe(200);
    const promoted = await waitFor(
      () => events(group.device_id, 'group.participants_promoted', group.id),
      (list) => list.length > 0,
      { what: 'promoted' },
    );
    expect(promoted).toEqual([expect.objectContaining({ participants: [member], by: admin })]);
    expect((await gw.request('GET', `/groups/${group.id}`)).body.data.participants).toContainEqual({
      phone: member,
      admin: 'admin',
    });
    expect(
      (await byPhone(admin, { group_id: group.network_id, action: 'demote', participants: [member] })).status,
    ).toBe(200);
    await waitFor(
      () => events(group.device_id, 'group.participants_demoted', group.id),
      (list) => list.length === 1,
      { what: 'demoted' },
    );
    expect(
      (await byPhone(admin, { group_id: group.network_id, action: 'remove', participants: [member] })).status,
    ).toBe(200);
    const removed = await waitFor(
      () => events(group.device_id, 'group.participants_removed', group.id),
      (list) => list.length > 0,
      { what: 'removed' },
    );
    expect(removed).toEqual([expect.objectContaining({ participants: [member], by: admin })]);
    expect((await gw.request('GET', `/groups/${group.id}`)).body.data.participants).not.toContainEqual(
      expect.objectContaining({ phone: member }),
    );
    // The device's own change is recorded by the request (admin.ts), not a second time from the echo.
    const [another] = fresh(1) as [string];
    await gw.request('POST', `/groups/${group.id}/members/add`, { participants: [another] });
    expect((await gw.request('POST', `/groups/${group.id}/members/remove`, { participants: [another] })).status).toBe(
      200,
    );
    await settle();
    const all = await events(group.device_id, 'group.participants_removed', group.id);
    expect(all).toHaveLength(2);
    expect(all[1]).toMatchObject({ participants: [another], by: device });
    // Nothing the group's info shows changed: no group.updated.
    expect(await events(group.device_id, 'group.updated', group.id)).toEqual([]);
  });

  it('records the device removed by someone else, and the group leaves the list', async () => {
    const [owner] = fresh(1) as [string];
    const created = await networkGroup(gw, 'Out', [{ phone: owner, admin: true }, { phone: device }]);
    const group = await syncedGroup(gw, device, created.id);
    await gw.request('PATCH', `/devices/${group.device_id}`, { webhook_url: 'https://hooks.example.invalid/g' });
    expect((await byPhone(owner, { group_id: created.id, action: 'remove', participants: [device] })).status).toBe(200);
    const removed = await waitFor(
      () => events(group.device_id, 'group.participants_removed', group.id),
      (list) => list.length > 0,
      { what: 'removed' },
    );
    expect(removed).toEqual([expect.objectContaining({ participants: [device], by: owner, group_name: 'Out' })]);
    expect((await gw.request('GET', `/groups/${group.id}`)).status).toBe(404);
  });

  it('sets the group picture from a URL (group.updated picture changed); another member’s picture change too', async () => {
    const { group, admin } = await setUp('Picture');
    const res = await gw.request('PUT', `/groups/${group.id}/picture`, { url: `${base}/p.png` });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ code: 200, message: 'Group picture updated', data: { id: group.id } });
    await waitFor(
      () => events(group.device_id, 'group.updated', group.id),
      (list) => list.length > 0,
      { what: 'group.updated (own picture)' },
    );
    expect(
      (await byPhone(admin, { group_id: group.network_id, picture_url: 'https://pics.example/g.jpg' })).status,
    ).toBe(200);
    const recorded = await waitFor(
      () => events(group.device_id, 'group.updated', group.id),
      (list) => list.length === 2,
      { what: 'group.updated (their picture)' },
    );
    expect(recorded.map((e) => e.changes)).toEqual([{ picture: 'changed' }, { picture: 'changed' }]);
    expect(recorded[1]).toMatchObject({ by: admin });
  });

  it('refuses a picture with a clear error at each boundary; a member that is not admin is 403', async () => {
    const { group } = await setUp('Refusals');
    const put = (body: unknown) => gw.request('PUT', `/groups/${group.id}/picture`, body);
    for (const [body, status, message] of [
      [{}, 400, 'Validation failed'],
      [{ url: 5 }, 400, 'Validation failed'],
      [{ url: 'not a url' }, 400, 'Invalid image URL'],
      [{ url: `${base}/p.gif` }, 400, 'Unsupported file format'],
      [{ url: `${base}/missing.png` }, 400, 'Unable to download image'],
    ] as const) {
      const res = await put(body);
      expect(res.status, JSON.stringify(body)).toBe(status);
      expect(res.body.message, JSON.stringify(res.body)).toBe(message);
    }
    expect((await gw.request('PUT', '/groups/999999/picture', { url: `${base}/p.png` })).body.message).toBe(
      'Group not found',
    );
    const [owner] = fresh(1) as [string];
    const created = await networkGroup(gw, 'Not mine', [{ phone: owner, admin: true }, { phone: device }]);
    const plain = await syncedGroup(gw, device, created.id);
    const denied = await gw.request('PUT', `/groups/${plain.id}/picture`, { url: `${base}/p.png` });
    expect(denied.status).toBe(403);
    expect(denied.body.message).toBe('Access denied');
  });
});
