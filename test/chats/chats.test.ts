// DECISIONS 16: the chat list, a chat's history, marking a chat read and archive/pin/mute, end to end through the
// sandbox, and every error at its boundary; another account's device is 404.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { noStoreAvailable, startGateway, type Answer, type TestGateway } from '../helpers/gateway.js';
import { createPairedDevice } from '../helpers/pairing.js';
import { waitFor } from '../helpers/wait.js';
import { adminGroup, numbers } from '../groups/helpers.js';

const build = { sandbox: { deliveryDelayMs: 5, readDelayMs: 5 } };
const fresh = numbers('62841');

describe.skipIf(noStoreAvailable)('chats', () => {
  let gw: TestGateway;
  let device: string;
  let deviceId: number;
  beforeAll(async () => {
    gw = await startGateway({ build, config: { sendIntervalMs: 0 } });
    const paired = await createPairedDevice(gw, '6284199000001');
    device = paired.phone;
    deviceId = paired.id;
  });
  afterAll(() => gw?.close());

  const refused = (res: Answer, status: number, message: string) => {
    expect(res.status, JSON.stringify(res.body)).toBe(status);
    expect(res.body).toMatchObject({ code: status, status, message });
  };
  const send = async (receiver: string, message: string) => {
    const res = await gw.request('POST', '/messages', { device, receiver, type: 'chat', message });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const id = res.body.data.id as string;
    // Settled (delivered to the phone), so the objects compared below do not change in between.
    await waitFor(
      async () => (await gw.request('GET', `/messages/${id}`)).body.data.status,
      (status) => status === 'delivered',
      { what: `message ${id} delivered` },
    );
    return id;
  };
  /** A phone writes to the device; answers the stored incoming message's id. */
  const receive = async (from: string, text: string) => {
    const res = await gw.request('POST', `/sandbox/phones/${from}/messages`, { to: device, text });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const [found] = await waitFor(
      async () =>
        ((await gw.request('GET', `/chats/${from}/messages?device=${device}&limit=100`)).body.data as any[]).filter(
          (m) => m.direction === 'incoming' && m.message === text,
        ),
      (list) => list.length === 1,
      { what: `the message ${text}` },
    );
    return found.id as string;
  };
  const chatsOf = async (query = '') => (await gw.request('GET', `/chats?device=${device}&limit=100${query}`)).body;
  const chat = async (id: string) => ((await chatsOf()).data as any[]).find((c) => c.id === id);

  it('lists the chats most recent first, each with its last message as GET /messages shows it and its unread count', async () => {
    const [a, b, c] = fresh(3) as [string, string, string];
    await send(a, 'to a');
    await receive(b, 'from b 1');
    await receive(b, 'from b 2');
    const lastOfA = await send(a, 'to a again');
    await receive(c, 'from c');

    const res = await gw.request('GET', `/chats?device=${device}&limit=100`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ code: 200, status: 200, message: 'OK', next_cursor: null });
    const mine = (res.body.data as any[]).filter((x) => [a, b, c].includes(x.id));
    expect(mine.map((x) => x.id)).toEqual([c, a, b]);
    const [ofC, ofA, ofB] = mine;
    expect(ofA).toEqual({
      id: a,
      type: 'user',
      name: null,
      last_message: (await gw.request('GET', `/messages/${lastOfA}`)).body.data,
      unread_count: 0,
      archived: false,
      pinned: false,
      muted_until: null,
    });
    expect(ofB.unread_count).toBe(2);
    expect(ofB.last_message.message).toBe('from b 2');
    expect(ofC.unread_count).toBe(1);
    expect(ofC.last_message.direction).toBe('incoming');
    // The same device named by its id.
    const byId = await gw.request('GET', `/chats?device=${deviceId}&limit=100`);
    expect(byId.body.data).toEqual(res.body.data);
  });

  it('pages the chat list with next_cursor (null on the last page), every chat exactly once', async () => {
    const others = fresh(5);
    for (const phone of others) await send(phone, `hello ${phone}`);
    const all = ((await chatsOf()).data as any[]).map((x) => x.id);
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const url: string = `/chats?device=${device}&limit=2${cursor === null ? '' : `&cursor=${cursor}`}`;
      const res = await gw.request('GET', url);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.data.length).toBeLessThanOrEqual(2);
      seen.push(...(res.body.data as any[]).map((x) => x.id));
      cursor = res.body.next_cursor;
      pages += 1;
    } while (cursor !== null);
    expect(seen).toEqual(all);
    expect(pages).toBe(Math.ceil(all.length / 2));
  });

  it('answers a chat’s messages in both directions, newest first, paged', async () => {
    const [friend] = fresh(1) as [string];
    const ids = [await send(friend, 'one'), await receive(friend, 'two'), await send(friend, 'three')];
    const first = await gw.request('GET', `/chats/${friend}/messages?device=${device}&limit=2`);
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect((first.body.data as any[]).map((m) => m.id)).toEqual([ids[2], ids[1]]);
    expect(first.body.data[0]).toEqual((await gw.request('GET', `/messages/${ids[2]}`)).body.data);
    expect(first.body.next_cursor).toEqual(expect.any(String));
    const second = await gw.request(
      'GET',
      `/chats/${friend}/messages?device=${device}&limit=2&cursor=${first.body.next_cursor}`,
    );
    expect((second.body.data as any[]).map((m) => m.id)).toEqual([ids[0]]);
    expect(second.body.next_cursor).toBeNull();
    // A chat with no message: an empty page.
    const [nobody] = fresh(1) as [string];
    const empty = await gw.request('GET', `/chats/${nobody}/messages?device=${device}`);
    expect(empty.body).toMatchObject({ code: 200, data: [], next_cursor: null });
  });

  it('shows a group chat under the group’s network id with its subject; {chat} takes the gateway’s id or the JID', async () => {
    const group = await adminGroup(gw, device, 'Chat group', fresh(2));
    const sent = await gw.request('POST', `/groups/${group.id}/send`, { type: 'chat', message: 'hi group' });
    expect(sent.status, JSON.stringify(sent.body)).toBe(200);
    const listed = await chat(group.network_id);
    expect(listed).toMatchObject({ id: group.network_id, type: 'group', name: 'Chat group', unread_count: 0 });
    expect(listed.last_message.id).toBe(sent.body.data.id);
    for (const ref of [String(group.id), group.network_id]) {
      const res = await gw.request('GET', `/chats/${encodeURIComponent(ref)}/messages?device=${device}`);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect((res.body.data as any[]).map((m) => m.id)).toEqual([sent.body.data.id]);
    }
  });

  it('marks every unread received message of a chat read, on the network; the chat shows 0 unread', async () => {
    const [friend, other] = fresh(2) as [string, string];
    const ids = [await receive(friend, 'r1'), await receive(friend, 'r2'), await receive(friend, 'r3')];
    await receive(other, 'stays unread');
    expect((await chat(friend)).unread_count).toBe(3);

    const res = await gw.request('POST', `/chats/${friend}/read`, { device });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ code: 200, message: 'Chat marked read', data: { id: friend, unread_count: 0 } });
    for (const id of ids)
      expect((await gw.request('GET', `/messages/${id}`)).body.data.read_at).toEqual(expect.any(String));
    expect((await chat(friend)).unread_count).toBe(0);
    expect((await chat(other)).unread_count).toBe(1);
    // The phone hears the read marks.
    const inbox = await waitFor(
      async () => ((await gw.request('GET', `/sandbox/phones/${friend}`)).body.data.inbox as any[]) ?? [],
      (entries) => entries.some((e) => e.type === 'read'),
      { what: 'the read marks' },
    );
    expect(inbox.filter((e) => e.type === 'read').flatMap((e) => e.content.message_ids)).toHaveLength(3);
    // Nothing unread: the same answer, nothing sent.
    const again = await gw.request('POST', `/chats/${friend}/read`, { device: String(deviceId) });
    expect(again.status).toBe(200);
    expect(again.body.data.unread_count).toBe(0);
  });

  it('archives, pins and mutes a chat on the network; the list and the sandbox’s view of the device show it', async () => {
    const [friend] = fresh(1) as [string];
    const last = await send(friend, 'before archiving');
    const until = '2031-05-01T10:00:00.000Z';
    const res = await gw.request('PATCH', `/chats/${friend}`, {
      device,
      archived: true,
      pinned: true,
      muted_until: until,
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({
      code: 200,
      message: 'Chat updated',
      data: { id: friend, archived: true, pinned: true, muted_until: until },
    });
    expect(await chat(friend)).toMatchObject({ archived: true, pinned: true, muted_until: until });
    const view = (await gw.request('GET', `/sandbox/phones/${device}`)).body.data;
    expect(view.chats.find((c: any) => c.chat === friend)).toMatchObject({
      chat: friend,
      archived: true,
      pinned: true,
      muted_until: until,
      last_message_id: last,
    });
    // One field at a time; the others stay.
    const unmuted = await gw.request('PATCH', `/chats/${friend}`, { device, muted_until: null });
    expect(unmuted.body.data).toMatchObject({ archived: true, pinned: true, muted_until: null });
    const unarchived = await gw.request('PATCH', `/chats/${friend}`, { device, archived: false });
    expect(unarchived.body.data).toMatchObject({ archived: false, pinned: true, muted_until: null });
    // A chat the gateway has no message of: archived all the same, listed with no last message, last.
    const [quiet] = fresh(1) as [string];
    const archivedQuiet = await gw.request('PATCH', `/chats/${quiet}`, { device, archived: true });
    expect(archivedQuiet.body.data).toMatchObject({ id: quiet, last_message: null, archived: true, unread_count: 0 });
    expect(((await chatsOf()).data as any[]).at(-1).id).toBe(quiet);
  });

  it('refuses bad requests with the error envelope, each at its boundary', async () => {
    const [friend] = fresh(1) as [string];
    refused(await gw.request('GET', '/chats'), 400, 'Validation failed');
    expect((await gw.request('GET', '/chats')).body.errors).toEqual({
      device: ['is required: the device’s phone number or id'],
    });
    refused(await gw.request('GET', '/chats?device=6284199999999'), 404, 'Device not found');
    refused(await gw.request('GET', '/chats?device=999999'), 404, 'Device not found');
    refused(await gw.request('GET', `/chats?device=${device}&limit=0`), 400, 'Validation failed');
    refused(await gw.request('GET', `/chats?device=${device}&limit=101`), 400, 'Validation failed');
    expect((await gw.request('GET', `/chats?device=${device}&limit=100`)).status).toBe(200);
    refused(await gw.request('GET', `/chats?device=${device}&cursor=nonsense`), 400, 'Validation failed');
    expect((await gw.request('GET', `/chats?device=${device}&cursor=nonsense`)).body.errors).toEqual({
      cursor: ['is not a cursor from this API'],
    });
    refused(await gw.request('GET', `/chats/not-a-chat/messages?device=${device}`), 400, 'Validation failed');
    refused(await gw.request('GET', `/chats/%2B${friend}/messages?device=${device}`), 400, 'Validation failed');
    refused(await gw.request('GET', `/chats/987654/messages?device=${device}`), 404, 'Group not found');
    refused(await gw.request('PATCH', `/chats/${friend}`, { device }), 400, 'Validation failed');
    const bad = await gw.request('PATCH', `/chats/${friend}`, {
      device,
      archived: 'yes',
      muted_until: '2001-01-01T00:00:00Z',
    });
    refused(bad, 400, 'Validation failed');
    expect(Object.keys(bad.body.errors).sort()).toEqual(['archived', 'muted_until']);
    refused(
      await gw.request('PATCH', `/chats/${friend}`, { device, muted_until: 'tomorrow' }),
      400,
      'Validation failed',
    );
    refused(await gw.request('PATCH', `/chats/${friend}`, { archived: true }), 400, 'Validation failed');
    refused(await gw.request('POST', `/chats/${friend}/read`, {}), 400, 'Validation failed');
    refused(
      await gw.request('PATCH', '/chats/120363999999999999@g.us', { device, pinned: true }),
      404,
      'Group not found',
    );
    refused(await gw.request('GET', '/chats?device=1', undefined, null), 401, 'Unauthorized');

    // A device that is not connected: read and settings are 400 Device not connected; reads of the store work.
    const created = await gw.request('POST', '/devices', {
      package: 'BUSINESS',
      name: 'unpaired',
      phone: '6284199000009',
    });
    const unpaired = created.body.data.id as number;
    refused(
      await gw.request('PATCH', `/chats/${friend}`, { device: unpaired, pinned: true }),
      400,
      'Device not connected',
    );
    refused(await gw.request('POST', `/chats/${friend}/read`, { device: unpaired }), 400, 'Device not connected');
    expect((await gw.request('GET', `/chats?device=${unpaired}`)).body).toMatchObject({ data: [], next_cursor: null });
  });

  it('documents every chat route in the OpenAPI document, the chat object with its fields', async () => {
    const doc = (await gw.request('GET', '/openapi.json', undefined, null)).body;
    for (const [path, method] of [
      ['/chats', 'get'],
      ['/chats/{chat}/messages', 'get'],
      ['/chats/{chat}/read', 'post'],
      ['/chats/{chat}', 'patch'],
    ] as const) {
      expect(doc.paths[path]?.[method]?.tags, `${method} ${path}`).toEqual(['Chats']);
    }
    const listed = doc.paths['/chats'].get.responses['200'].content['application/json'].schema;
    expect(Object.keys(listed.properties.data.items.properties)).toEqual([
      'id',
      'type',
      'name',
      'last_message',
      'unread_count',
      'archived',
      'pinned',
      'muted_until',
    ]);
    expect(listed.properties.next_cursor).toBeDefined();
    const patch = doc.paths['/chats/{chat}'].patch.requestBody.content['application/json'].schema;
    expect(Object.keys(patch.properties)).toEqual(['device', 'archived', 'pinned', 'muted_until']);
  });

  it('another account’s device is 404 on every chat route', async () => {
    const other = await gw.app.services.accounts.createAccount('chats-other');
    const token = (await gw.app.services.accounts.createToken(other.id, 't')).token;
    const [friend] = fresh(1) as [string];
    for (const ref of [device, String(deviceId)]) {
      for (const [method, url, body] of [
        ['GET', `/chats?device=${ref}`, undefined],
        ['GET', `/chats/${friend}/messages?device=${ref}`, undefined],
        ['POST', `/chats/${friend}/read`, { device: ref }],
        ['PATCH', `/chats/${friend}`, { device: ref, pinned: true }],
      ] as const) {
        refused(await gw.request(method, url, body, token), 404, 'Device not found');
      }
    }
  });
});
