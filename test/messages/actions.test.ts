// Message actions through the sandbox (docs/api.md, Message actions): reaction, edit, cancel and delete for
// everyone, mark read, forward; each through the device's queue (the phone's inbox sees it after the message), its
// errors at their boundaries with a moved clock, idempotency, and concurrency on one message.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { actionsRepository } from '../../src/messages/actions-repository.js';
import { noStoreAvailable, startGateway, type TestGateway } from '../helpers/gateway.js';
import { createPairedDevice } from '../helpers/pairing.js';
import { waitFor } from '../helpers/wait.js';

const build = { sandbox: { deliveryDelayMs: 5, readDelayMs: 5 } };
const MINUTE = 60_000;

describe.skipIf(noStoreAvailable)('message actions', () => {
  let gw: TestGateway;
  const clock = new ManualClock(Date.now());
  let phone: string;
  let slowPhone: string;
  let slowId: number;

  beforeAll(async () => {
    gw = await startGateway({ build, clock, config: { sendIntervalMs: 0 } });
    phone = (await createPairedDevice(gw, '6281588000001')).phone;
    const slow = await createPairedDevice(gw, '6281588000002');
    slowPhone = slow.phone;
    slowId = slow.id;
    // A device that waits ten minutes between sends: its second message stays queued, unclaimed.
    expect((await gw.request('PATCH', `/devices/${slowId}`, { send_interval_ms: 600_000 })).status).toBe(200);
  });
  afterAll(() => gw?.close());

  const inbox = async (of: string): Promise<any[]> =>
    (await gw.request('GET', `/sandbox/phones/${of}`)).body.data?.inbox ?? [];
  const inboxUntil = (of: string, done: (entries: any[]) => boolean, what: string) =>
    waitFor(() => inbox(of), done, { what });
  const get = async (id: string) => (await gw.request('GET', `/messages/${id}`)).body.data;
  const sent = async (receiver: string, text: string, from = phone) => {
    const res = await gw.request('POST', '/messages', { device: from, receiver, type: 'chat', params: { text } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const id = res.body.data.id as string;
    await waitFor(
      () => get(id),
      (m) => m.status !== 'pending',
      { what: `message ${id} sent` },
    );
    return id;
  };
  const refused = (res: { status: number; body: any }, status: number, message: string) => {
    expect(res.status, JSON.stringify(res.body)).toBe(status);
    expect(res.body.message).toBe(message);
  };
  const quotaUsed = async (deviceId: number) =>
    Number((await gw.request('GET', `/devices/${deviceId}`)).body.data.subscription.quote_used);
  const actionRows = (deviceId: number) =>
    gw.app.store.db
      .selectFrom('messages')
      .selectAll()
      .where('device_id', '=', deviceId)
      .where('direction', '=', 'action')
      .orderBy('seq')
      .execute();
  const deviceIdOf = async (of: string) =>
    (await gw.app.store.db.selectFrom('devices').select('id').where('phone', '=', of).executeTakeFirstOrThrow()).id;

  it('a reaction reaches the phone after the message, shows on the message, and is taken away with ""', async () => {
    const friend = '6281588120101';
    const id = await sent(friend, 'hello');
    const deviceId = await deviceIdOf(phone);
    const quota = await quotaUsed(deviceId);
    const res = await gw.request('POST', `/messages/${id}/reaction`, { emoji: '👍🏽' });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ code: 200, status: 200, message: 'Reaction sent' });
    expect(res.body.data).toMatchObject({ id, reactions: [{ from: phone, emoji: '👍🏽' }] });
    const entries = await inboxUntil(friend, (e) => e.length === 2, 'the reaction in the inbox');
    expect(entries.map((e) => e.type)).toEqual(['chat', 'reaction']);
    expect(entries[1]).toMatchObject({ from: phone, content: { emoji: '👍🏽', message_id: id } });
    const removed = await gw.request('POST', `/messages/${id}/reaction`, { emoji: '' });
    expect(removed.body.message).toBe('Reaction removed');
    expect(removed.body.data.reactions).toBeUndefined();
    const after = await inboxUntil(friend, (e) => e.length === 3, 'the reaction taken away');
    expect(after[2]).toMatchObject({ type: 'reaction', content: { emoji: '', message_id: id } });
    // Actions take no quota, and are no messages: not listed, not found by id.
    expect(await quotaUsed(deviceId)).toBe(quota);
    const listed = (await gw.request('GET', `/messages?device=${phone}&limit=100`)).body.data as any[];
    expect(listed.every((m) => m.direction !== 'action')).toBe(true);
    const [action] = await actionRows(deviceId);
    refused(await gw.request('GET', `/messages/${action!.id}`), 404, 'Message not found');
    await waitFor(
      () => actionRows(deviceId),
      (rows) => rows.every((r) => r.status === 'sent' && r.delivered_at === null),
      { what: 'actions done' },
    );
  });

  it('a reaction must be exactly one emoji (400 Validation failed naming emoji); unknown ids are 404', async () => {
    const id = await sent('6281588120202', 'x');
    for (const emoji of ['👍👍', 'ok', 5, null, ' ']) {
      const res = await gw.request('POST', `/messages/${id}/reaction`, { emoji });
      refused(res, 400, 'Validation failed');
      expect(res.body.errors).toEqual({ emoji: ['must be exactly one emoji, or "" to take the reaction away'] });
    }
    refused(
      await gw.request('POST', '/messages/01NOSUCHMESSAGE0000000000/reaction', { emoji: '👍' }),
      404,
      'Message not found',
    );
    // A message of ours that failed (an unregistered number: 0000) reached no one: nothing to react to.
    const failed = (
      await gw.request('POST', '/messages', {
        device: phone,
        receiver: '6281588120000',
        type: 'chat',
        params: { text: 'x' },
      })
    ).body.data.id as string;
    await waitFor(
      () => get(failed),
      (m) => m.status === 'failed',
      { what: 'the message failed' },
    );
    const onFailed = await gw.request('POST', `/messages/${failed}/reaction`, { emoji: '👍' });
    refused(onFailed, 400, 'Validation failed');
    expect(onFailed.body.errors).toEqual({ id: ['is a message that failed to send: it cannot be reacted to'] });
    refused(await gw.request('PATCH', '/messages/01NOSUCHMESSAGE0000000000', { text: 'x' }), 404, 'Message not found');
    refused(await gw.request('DELETE', '/messages/01NOSUCHMESSAGE0000000000'), 404, 'Message not found');
    refused(await gw.request('POST', '/messages/01NOSUCHMESSAGE0000000000/read'), 404, 'Message not found');
  });

  it('edits within 15 minutes of sent_at, not a second later; the phone sees the edit after the message', async () => {
    const friend = '6281588120303';
    const id = await sent(friend, 'see you at 9');
    const sentAt = Date.parse((await get(id)).sent_at);
    clock.set(sentAt + 15 * MINUTE);
    const res = await gw.request('PATCH', `/messages/${id}`, { text: 'see you at 10' });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.message).toBe('Message edited');
    expect(res.body.data).toMatchObject({ message: 'see you at 10', params: { text: 'see you at 10' } });
    expect(res.body.data.edited_at).toBe(new Date(sentAt + 15 * MINUTE).toISOString());
    const entries = await inboxUntil(friend, (e) => e.length === 2, 'the edit in the inbox');
    expect(entries[1]).toMatchObject({ type: 'edit', content: { text: 'see you at 10', message_id: id } });
    clock.set(sentAt + 15 * MINUTE + 1);
    refused(await gw.request('PATCH', `/messages/${id}`, { text: 'too late' }), 400, 'Message cannot be edited');
    refused(await gw.request('PATCH', `/messages/${id}`, { text: '' }), 400, 'Validation failed');
    refused(await gw.request('PATCH', `/messages/${id}`, { text: 'x'.repeat(4097) }), 400, 'Validation failed');
  });

  it('two edits at once: both answered, the later one is the text, the phone sees both in order', async () => {
    const friend = '6281588120404';
    const id = await sent(friend, 'v0');
    const [a, b] = await Promise.all([
      gw.request('PATCH', `/messages/${id}`, { text: 'v1' }),
      gw.request('PATCH', `/messages/${id}`, { text: 'v2' }),
    ]);
    expect([a.status, b.status]).toEqual([200, 200]);
    const entries = await inboxUntil(friend, (e) => e.length === 3, 'both edits');
    const last = entries[2].content.text;
    expect((await get(id)).message).toBe(last);
    expect(entries.slice(1).map((e) => e.type)).toEqual(['edit', 'edit']);
  });

  it('edit + delete at once: the delete always wins the end state; an edit after it is refused', async () => {
    const friend = '6281588120505';
    const id = await sent(friend, 'oops');
    const [edit, del] = await Promise.all([
      gw.request('PATCH', `/messages/${id}`, { text: 'fixed' }),
      gw.request('DELETE', `/messages/${id}`),
    ]);
    expect(del.status).toBe(200);
    expect(del.body.message).toBe('Message deleted');
    expect([200, 400]).toContain(edit.status);
    expect((await get(id)).deleted_at).toBeTypeOf('string');
    refused(await gw.request('PATCH', `/messages/${id}`, { text: 'again' }), 400, 'Message cannot be edited');
    refused(await gw.request('DELETE', `/messages/${id}`), 400, 'Message cannot be deleted');
    const entries = await inboxUntil(friend, (e) => e.some((x) => x.type === 'delete'), 'the delete');
    expect(entries[0].type).toBe('chat');
    expect(entries.at(-1)).toMatchObject({ type: 'delete', content: { message_id: id } });
  });

  it('deletes for everyone within 48 hours of sent_at, not after', async () => {
    const id = await sent('6281588120606', 'old');
    const late = await sent('6281588120606', 'older');
    // The clock only moves forward: a lane's wait set before never outlasts the test.
    clock.set(Date.parse((await get(id)).sent_at) + 48 * 60 * MINUTE);
    const res = await gw.request('DELETE', `/messages/${id}`);
    expect(res.body).toMatchObject({ code: 200, message: 'Message deleted' });
    expect(res.body.data.deleted_at).toBe(new Date(clock.now()).toISOString());
    clock.set(Date.parse((await get(late)).sent_at) + 48 * 60 * MINUTE + 1);
    refused(await gw.request('DELETE', `/messages/${late}`), 400, 'Message cannot be deleted');
  });

  it('cancels a queued message: failed "cancelled", its quota unit back exactly once, never sent', async () => {
    const friend = '6281588120707';
    await sent(friend, 'first', slowPhone);
    // `sent` is the gateway's status; the phone's inbox holds the message a delivery delay later (5 ms here), which the
    // steps below could take less than: the inbox read at the end found it empty once.
    await inboxUntil(friend, (e) => e.length === 1, 'the first message in the inbox');
    const res = await gw.request('POST', '/messages', {
      device: slowPhone,
      receiver: friend,
      type: 'chat',
      params: { text: 'second' },
    });
    const id = res.body.data.id as string;
    const quota = await quotaUsed(slowId);
    const [c1, c2] = await Promise.all([
      gw.request('DELETE', `/messages/${id}`),
      gw.request('DELETE', `/messages/${id}`),
    ]);
    const answers = [c1, c2].map((r) => `${r.status} ${r.body.message}`).sort();
    expect(answers).toEqual(['200 Message cancelled', '400 Message cannot be deleted']);
    expect(await get(id)).toMatchObject({ status: 'failed', failed_reason: 'cancelled' });
    expect(await quotaUsed(slowId)).toBe(quota - 1);
    // The lane that had read it finds it gone: it never reaches the phone.
    gw.app.services.dispatcher.deviceChanged(slowId);
    expect((await inbox(friend)).map((e) => e.content.text)).toEqual(['first']);
  });

  it('a claimed message cannot be cancelled, and a cancelled one cannot be claimed: one statement decides', async () => {
    const db = gw.app.store.db;
    const friend = '6281588120808';
    const queued = async () =>
      (
        await gw.request('POST', '/messages', {
          device: slowPhone,
          receiver: friend,
          type: 'chat',
          params: { text: 'q' },
        })
      ).body.data.id as string;
    const a = await queued();
    expect(await actionsRepository.claim(db, a, clock.now())).toBe(true);
    refused(await gw.request('DELETE', `/messages/${a}`), 400, 'Message cannot be deleted');
    expect((await get(a)).status).toBe('pending');
    const b = await queued();
    expect((await gw.request('DELETE', `/messages/${b}`)).body.message).toBe('Message cancelled');
    expect(await actionsRepository.claim(db, b, clock.now())).toBe(false);
  });

  it('marks an incoming message and every earlier unread one of its chat read; only incoming ones', async () => {
    const friend = '6281588120909';
    const other = '6281588121010';
    const ids: string[] = [];
    for (const [from, text] of [
      [friend, 'a'],
      [other, 'b'],
      [friend, 'c'],
      [friend, 'd'],
    ] as const) {
      const res = await gw.request('POST', `/sandbox/phones/${from}/messages`, { to: phone, text });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
    }
    const incoming = await waitFor(
      async () =>
        ((await gw.request('GET', `/messages?device=${phone}&direction=incoming&limit=100`)).body.data as any[]).filter(
          (m) => [friend, other].includes(m.sender),
        ),
      (list) => list.length === 4,
      { what: 'four incoming messages' },
    );
    const ofFriend = incoming.filter((m) => m.sender === friend).reverse();
    ids.push(...ofFriend.map((m) => m.id));
    const res = await gw.request('POST', `/messages/${ids[1]}/read`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.message).toBe('Message read');
    expect(res.body.data.read_at).toBeTypeOf('string');
    expect((await get(ids[0]!)).read_at).toBeTypeOf('string');
    expect((await get(ids[2]!)).read_at).toBeNull();
    expect((await get(incoming.find((m) => m.sender === other).id)).read_at).toBeNull();
    const entries = await inboxUntil(friend, (e) => e.some((x) => x.type === 'read'), 'the read marks');
    expect(entries.find((e) => e.type === 'read').content.message_ids).toHaveLength(2);
    const ours = await sent(friend, 'mine');
    refused(await gw.request('POST', `/messages/${ours}/read`), 400, 'Message cannot be marked read');
  });

  it('forwards ours and a received text to another receiver as a new counted message marked forwarded', async () => {
    const id = await sent('6281588121111', 'pass it on');
    const deviceId = await deviceIdOf(phone);
    const quota = await quotaUsed(deviceId);
    const res = await gw.request('POST', `/messages/${id}/forward`, { receiver: '6281588121212' });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data).toMatchObject({
      receiver: '6281588121212',
      message: 'pass it on',
      params: { text: 'pass it on', forwarded: true },
    });
    expect(res.body.data.id).not.toBe(id);
    expect(await quotaUsed(deviceId)).toBe(quota + 1);
    const [entry] = await inboxUntil('6281588121212', (e) => e.length === 1, 'the forwarded copy');
    expect(entry).toMatchObject({ type: 'chat', content: { text: 'pass it on' }, forwarded: true });
    const bad = await gw.request('POST', `/messages/${id}/forward`, { receiver: '+62abc' });
    refused(bad, 400, 'Invalid phone number format');
  });

  it('idempotent under Idempotency-Key: the same request answers the first answer; another body is 409', async () => {
    const id = await sent('6281588121313', 'k');
    const key = `react-${id}`;
    const first = await gw.app.inject({
      method: 'POST',
      url: `/messages/${id}/reaction`,
      headers: { authorization: `Bearer ${gw.config.bootstrapToken}`, 'idempotency-key': key },
      payload: { emoji: '🎉' },
    });
    const again = await gw.app.inject({
      method: 'POST',
      url: `/messages/${id}/reaction`,
      headers: { authorization: `Bearer ${gw.config.bootstrapToken}`, 'idempotency-key': key },
      payload: { emoji: '🎉' },
    });
    expect(first.statusCode).toBe(200);
    expect(again.json()).toEqual(first.json());
    const other = await gw.app.inject({
      method: 'POST',
      url: `/messages/${id}/reaction`,
      headers: { authorization: `Bearer ${gw.config.bootstrapToken}`, 'idempotency-key': key },
      payload: { emoji: '😀' },
    });
    expect(other.statusCode).toBe(409);
    const deviceId = await deviceIdOf(phone);
    const rows = (await actionRows(deviceId)).filter((r) => JSON.parse(r.params).message_id === id);
    expect(rows).toHaveLength(1);
  });

  it('actions at once share commits: a refused one keeps nothing (its key is free again), the others all count', async () => {
    const friend = '6281588121414';
    const ids = await Promise.all(Array.from({ length: 8 }, (_, i) => sent(friend, `batch ${i}`)));
    const location = await gw.request('POST', '/messages', {
      device: phone,
      receiver: friend,
      type: 'location',
      params: { location: { degreesLatitude: 1, degreesLongitude: 2 } },
    });
    const locationId = location.body.data.id as string;
    await waitFor(
      () => get(locationId),
      (m) => m.status !== 'pending',
      { what: 'location sent' },
    );
    const deviceId = await deviceIdOf(phone);
    const before = (await actionRows(deviceId)).length;
    const headers = (key: string) => ({ authorization: `Bearer ${gw.config.bootstrapToken}`, 'idempotency-key': key });
    const refusedKey = `batch-refused-${locationId}`;
    // Issued in one turn of the event loop: they reach the accepting transaction together.
    const answers = await Promise.all([
      ...ids.map((id) =>
        gw.app.inject({
          method: 'POST',
          url: `/messages/${id}/reaction`,
          headers: headers(`batch-${id}`),
          payload: { emoji: '🔥' },
        }),
      ),
      gw.app.inject({
        method: 'PATCH',
        url: `/messages/${locationId}`,
        headers: headers(refusedKey),
        payload: { text: 'x' },
      }),
    ]);
    expect(answers.slice(0, ids.length).map((a) => a.statusCode)).toEqual(ids.map(() => 200));
    expect(answers.at(-1)!.statusCode).toBe(400);
    expect(answers.at(-1)!.json().message).toBe('Message cannot be edited');
    for (const id of ids) expect((await get(id)).reactions).toEqual([{ from: phone, emoji: '🔥' }]);
    expect((await actionRows(deviceId)).length).toBe(before + ids.length);
    // The refused edit claimed its key in the shared transaction; that claim was undone with it.
    const reused = await gw.app.inject({
      method: 'POST',
      url: `/messages/${locationId}/reaction`,
      headers: headers(refusedKey),
      payload: { emoji: '👍' },
    });
    expect(reused.statusCode, reused.body).toBe(200);
  });

  it('another account’s message is 404 on every action; it is left as it was', async () => {
    const id = await sent('6281588121414', 'mine only');
    const other = await gw.app.services.accounts.createAccount('actions-other');
    const token = (await gw.app.services.accounts.createToken(other.id, 't')).token;
    for (const [method, path, body] of [
      ['POST', `/messages/${id}/reaction`, { emoji: '👍' }],
      ['PATCH', `/messages/${id}`, { text: 'theirs' }],
      ['DELETE', `/messages/${id}`, undefined],
      ['POST', `/messages/${id}/read`, undefined],
      ['POST', `/messages/${id}/forward`, { receiver: '6281588121515' }],
    ] as const) {
      const res = await gw.request(method, path, body, token);
      expect(res.body, `${method} ${path}`).toEqual({ code: 404, status: 404, message: 'Message not found' });
    }
    expect(await get(id)).toMatchObject({ message: 'mine only', status: expect.not.stringMatching('failed') });
    expect((await get(id)).deleted_at).toBeUndefined();
  });

  it('received messages: no edit, no delete; a reaction goes to the sender on its network id; read twice sends once', async () => {
    const friend = '6281588121616';
    expect(
      (await gw.request('POST', `/sandbox/phones/${friend}/messages`, { to: phone, text: 'question?' })).status,
    ).toBe(200);
    const [incoming] = await waitFor(
      async () =>
        ((await gw.request('GET', `/messages?device=${phone}&direction=incoming&limit=100`)).body.data as any[]).filter(
          (m) => m.sender === friend,
        ),
      (list) => list.length === 1,
      { what: 'the incoming message' },
    );
    refused(await gw.request('PATCH', `/messages/${incoming.id}`, { text: 'x' }), 400, 'Message cannot be edited');
    refused(await gw.request('DELETE', `/messages/${incoming.id}`), 400, 'Message cannot be deleted');
    const reacted = await gw.request('POST', `/messages/${incoming.id}/reaction`, { emoji: '❤️' });
    expect(reacted.body.data.reactions).toEqual([{ from: phone, emoji: '❤️' }]);
    const first = await gw.request('POST', `/messages/${incoming.id}/read`);
    const again = await gw.request('POST', `/messages/${incoming.id}/read`);
    expect([first.body.message, again.body.message]).toEqual(['Message read', 'Message read']);
    expect(again.body.data.read_at).toBe(first.body.data.read_at);
    const entries = await inboxUntil(friend, (e) => e.some((x) => x.type === 'read'), 'the read mark');
    expect(entries.map((e) => e.type)).toEqual(['reaction', 'read']);
    // The phone knows its message by the network's id, which is the one it sent.
    const networkId = (
      await gw.app.store.db
        .selectFrom('incoming_message_ids')
        .select('network_id')
        .where('message_id', '=', incoming.id)
        .executeTakeFirstOrThrow()
    ).network_id;
    expect(entries[0].content.message_id).toBe(networkId);
    expect(entries[1].content.message_ids).toEqual([networkId]);
    // Forwarding a text received: a new message of ours with its text.
    const fwd = await gw.request('POST', `/messages/${incoming.id}/forward`, { receiver: '6281588121717' });
    expect(fwd.body.data).toMatchObject({ direction: 'outgoing', message: 'question?', params: { forwarded: true } });
  });

  it('a message with no text or caption (a location) cannot be edited', async () => {
    const res = await gw.request('POST', '/messages', {
      device: phone,
      receiver: '6281588121818',
      type: 'location',
      params: { location: { degreesLatitude: 1, degreesLongitude: 2 } },
    });
    const id = res.body.data.id as string;
    await waitFor(
      () => get(id),
      (m) => m.status !== 'pending',
      { what: 'location sent' },
    );
    refused(await gw.request('PATCH', `/messages/${id}`, { text: 'x' }), 400, 'Message cannot be edited');
  });
});
