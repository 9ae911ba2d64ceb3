// docs/internals.md, Whatspie compatibility (issue 11): the group requests, mentions and replies that real Whatspie clients and the
// hosted service's docs send (research: whatspie-clients.md, 5.1, 5.4 C7 and C9, 5.6, 6.3, 6.4), each
// exactly as the client sends it (content type, field layout, path), with the effect checked on the
// network: the message in the sandbox phones' inboxes with its mentions and quote, the group changed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_TOKEN, noStoreAvailable, startGateway, type TestGateway } from '../helpers/gateway.js';
import { createPairedDevice } from '../helpers/pairing.js';
import { waitFor } from '../helpers/wait.js';
import { networkGroup, numbers, syncedGroup } from './helpers.js';

const fresh = numbers('62836');

describe.skipIf(noStoreAvailable)('group requests of real Whatspie clients', () => {
  let gw: TestGateway;
  let device: string;
  beforeAll(async () => {
    gw = await startGateway({
      config: { sendIntervalMs: 0 },
      build: { sandbox: { deliveryDelayMs: 1, readDelayMs: 1 } },
    });
    device = (await createPairedDevice(gw, '6283699000001')).phone;
  });
  afterAll(() => gw?.close());

  const call = async (
    method: 'GET' | 'POST' | 'PUT',
    url: string,
    payload?: string,
    contentType = 'application/json',
  ) => {
    const res = await gw.app.inject({
      method,
      url,
      headers: {
        authorization: `Bearer ${TEST_TOKEN}`,
        accept: 'application/json',
        ...(payload === undefined ? {} : { 'content-type': contentType }),
      },
      ...(payload === undefined ? {} : { payload }),
    });
    return { status: res.statusCode, body: JSON.parse(res.body) as any };
  };
  const json = (method: 'POST' | 'PUT', url: string, body: Record<string, unknown>) =>
    call(method, url, JSON.stringify(body));
  const received = (phone: string, id: string) =>
    waitFor(
      async () => ((await gw.request('GET', `/sandbox/phones/${phone}`)).body.data?.inbox ?? []) as any[],
      (inbox) => inbox.some((entry) => entry.message_id === id),
      { what: `message ${id} in ${phone}'s inbox` },
    ).then((inbox) => inbox.find((entry) => entry.message_id === id));

  async function group(name: string) {
    const [member, other] = fresh(2) as [string, string];
    const created = await networkGroup(gw, name, [{ phone: device, admin: true }, { phone: member }, { phone: other }]);
    return { ...(await syncedGroup(gw, device, created.id)), member, other };
  }

  it('C9 WhatspieListGroups: GET /groups?device=&limit=50 rows carry title and jid', async () => {
    const g = await group('Listed');
    const res = await call('GET', `/groups?device=${device}&limit=50`);
    expect(res.status).toBe(200);
    const row = res.body.data.find((r: any) => r.id === g.id);
    expect(row).toMatchObject({ title: 'Listed', id: g.id, jid: g.network_id });
  });

  it('TS SDK groups.get(device, jid): GET /groups/{jid}?device=', async () => {
    const g = await group('By JID');
    const res = await call('GET', `/groups/${g.network_id}?device=${device}`);
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ id: g.id, jid: g.network_id, title: 'By JID' });
  });

  it('TS SDK groups.sendMessage(): POST /messages with the group JID as receiver', async () => {
    const g = await group('SDK send');
    const res = await json('POST', '/messages', {
      device,
      receiver: g.network_id,
      type: 'chat',
      params: { text: 'Hello Group' },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ code: 200, status: 200, data: { receiver: g.network_id } });
    expect(await received(g.member, res.body.data.id)).toMatchObject({
      group_id: g.network_id,
      content: { text: 'Hello Group' },
    });
  });

  it('C7 notification app: group send with mentions as WhatsApp user ids; each mentioned number is shown', async () => {
    const g = await group('C7');
    const res = await json('POST', `/groups/${g.id}/send`, {
      message: 'Send Notification',
      type: 'chat',
      params: { text: '*STT* baru \n', mentions: [`${g.member}@s.whatsapp.net`] },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data.params).toEqual({ text: '*STT* baru \n', mentions: [g.member] });
    expect(await received(g.other, res.body.data.id)).toMatchObject({
      content: { text: '*STT* baru \n' },
      mentions: [g.member],
    });
  });

  it('group-send docs: {device, type, params: {text, quotedMessageId, mentions}} replies and mentions', async () => {
    const g = await group('Docs');
    const asked = await json('POST', `/groups/${g.id}/send`, { device, type: 'chat', params: { text: 'Who is in?' } });
    await received(g.member, asked.body.data.id);
    const res = await json('POST', `/groups/${g.id}/send`, {
      device,
      type: 'chat',
      params: { text: 'Great point!', quotedMessageId: asked.body.data.id, mentions: [g.member] },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(await received(g.member, res.body.data.id)).toMatchObject({
      content: { text: 'Great point!' },
      mentions: [g.member],
      quoted: { message_id: asked.body.data.id, from: device, text: 'Who is in?' },
    });
    // The docs' own example id is no message of this device: refused, never sent without its quote.
    const example = await json('POST', `/groups/${g.id}/send`, {
      device,
      type: 'chat',
      params: { text: 'Great point!', quotedMessageId: 'msg_group_12344', mentions: ['6289876543210'] },
    });
    expect(example.status).toBe(400);
    expect(example.body.errors).toEqual({
      'params.quotedMessageId': ['is not a message this device sent or received'],
    });
  });

  it('update-group docs: PUT /groups/{id} {subject, description, profile_url, permissions}', async () => {
    const g = await group('Before');
    const res = await json('PUT', `/groups/${g.id}`, {
      subject: 'Private Discussion',
      description: 'Admins only',
      profile_url: 'https://example.com/p.png',
      permissions: { allow_send: false, only_admins_can_send: true, only_admins_can_edit: true },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data).toMatchObject({
      title: 'Private Discussion',
      description: 'Admins only',
      permissions: { only_admins_can_send: true, only_admins_can_edit: true },
    });
    // The answer is the group as read back from the network after the change.
  });

  it('update-group docs: PUT /groups/{id} {subject, disappearing_messages: {enabled, duration: "24h"}}', async () => {
    const g = await group('Ephemeral');
    const res = await json('PUT', `/groups/${g.id}`, {
      subject: 'Private Discussion',
      disappearing_messages: { enabled: true, duration: '24h' },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data.disappearing_messages).toEqual({ enabled: true, duration: '24h' });
  });

  it('TS SDK groups.update() with the group JID in the path and device, group_id in the body', async () => {
    const g = await group('SDK update');
    const res = await json('PUT', `/groups/${g.network_id}`, {
      device,
      group_id: g.network_id,
      subject: 'Renamed by SDK',
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data).toMatchObject({ id: g.id, title: 'Renamed by SDK' });
  });

  it('a PHP form body: PUT /groups/{jid} with permissions[...] and disappearing_messages[...] fields', async () => {
    const g = await group('Form');
    const form = [
      `device=${device}`,
      'permissions%5Bonly_admins_can_send%5D=1',
      'permissions%5Bonly_admins_can_edit%5D=0',
      'disappearing_messages%5Benabled%5D=1',
      'disappearing_messages%5Bduration%5D=7d',
    ].join('&');
    const res = await call('PUT', `/groups/${g.network_id}`, form, 'application/x-www-form-urlencoded');
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data).toMatchObject({
      permissions: { only_admins_can_send: true, only_admins_can_edit: false },
      disappearing_messages: { enabled: true, duration: '7d' },
    });
  });

  it('legacy "send to group by WA group id": POST /groups/{jid}/send', async () => {
    const g = await group('Legacy');
    const res = await json('POST', `/groups/${g.network_id}/send`, {
      device,
      type: 'chat',
      params: { text: 'legacy' },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(await received(g.member, res.body.data.id)).toMatchObject({ content: { text: 'legacy' } });
  });
});
