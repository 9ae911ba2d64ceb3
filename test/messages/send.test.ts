// Spec 4.5, 2.3, 3.2; docs/internals.md, Quota; Sending: sending through the durable queue to the sandbox's phones.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { noStoreAvailable, startGateway, type TestGateway } from '../helpers/gateway.js';
import { createPairedDevice } from '../helpers/pairing.js';
import { waitFor } from '../helpers/wait.js';

const build = {
  sandbox: { deliveryDelayMs: 5, readDelayMs: 5 },
  dispatch: { retryBaseMs: 50, retryMaxMs: 200 },
  connections: { reconnectBaseMs: 20, reconnectMaxMs: 100 },
};

describe.skipIf(noStoreAvailable)('sending messages', () => {
  let gw: TestGateway;
  let sender: string;
  beforeAll(async () => {
    gw = await startGateway({ build, config: { sendIntervalMs: 0 } });
    sender = (await createPairedDevice(gw, '6281500000001')).phone;
  });
  afterAll(() => gw?.close());

  const send = (body: Record<string, unknown>, headers: Record<string, string> = {}) =>
    gw.app
      .inject({
        method: 'POST',
        url: '/messages',
        headers: { authorization: 'Bearer mgw_test_token_for_the_default_account_0000', ...headers },
        payload: { device: sender, ...body },
      })
      .then((res) => ({ status: res.statusCode, body: res.json() }));
  const message = async (id: string) => (await gw.request('GET', `/messages/${id}`)).body.data;
  // A phone the network has not seen yet has no inbox (404): nothing received.
  const inbox = async (phone: string) =>
    ((await gw.request('GET', `/sandbox/phones/${phone}`)).body.data?.inbox ?? []) as any[];

  it('accepts a chat message as pending and delivers it to the phone', async () => {
    const res = await send({ receiver: '6281599990011', type: 'chat', params: { text: '*Hello* _there_' } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      code: 200,
      status: 200,
      message: 'Message sent successfully',
      data: expect.objectContaining({
        id: expect.stringMatching(/^[0-9A-Z]{26}$/),
        status: 'pending',
        type: 'chat',
        device: sender,
        receiver: '6281599990011',
        message: '*Hello* _there_',
        params: { text: '*Hello* _there_' },
        simulate_typing: 0,
        timestamp: expect.any(String),
      }),
    });
    const id = res.body.data.id;
    const delivered = await waitFor(
      () => message(id),
      (m) => m.status === 'delivered',
      { what: 'delivered' },
    );
    expect(delivered.sent_at).not.toBeNull();
    expect(delivered.delivered_at).not.toBeNull();
    const received = (await inbox('6281599990011')).filter((e) => e.message_id === id);
    expect(received).toHaveLength(1);
    expect(received[0]).toMatchObject({ from: sender, type: 'chat', content: { text: '*Hello* _there_' } });

    await gw.request('POST', '/sandbox/phones/6281599990011/read', { message_id: id });
    const read = await waitFor(
      () => message(id),
      (m) => m.read_at !== null,
      { what: 'read_at' },
    );
    expect(read.status).toBe('delivered');
  });

  it('takes the text from a top-level message field for chat', async () => {
    const res = await send({ receiver: '6281599990002', type: 'chat', message: 'top level' });
    expect(res.status).toBe(200);
    expect(res.body.data.message).toBe('top level');
  });

  it.each([
    [
      'list',
      'List message sent successfully',
      {
        title: 'Menu',
        text: 'Pick one',
        buttonText: 'Open',
        sections: [{ title: 'Drinks', rows: [{ title: 'Tea', rowId: 'tea' }] }],
      },
    ],
    [
      'location',
      'Location sent successfully',
      { location: { degreesLatitude: -6.2, degreesLongitude: 106.8, name: 'Office' } },
    ],
    [
      'template',
      'Template message sent successfully',
      { text: 'Choose', templateButtons: [{ index: 1, quickReplyButton: { displayText: 'Yes', id: 'yes' } }] },
    ],
  ])('sends a %s message that reaches the phone', async (type, successMessage, params) => {
    const receiver = `62815999${String(Math.floor(Math.random() * 9000) + 1000)}`;
    const res = await send({ receiver, type, params });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.message).toBe(successMessage);
    const id = res.body.data.id;
    await waitFor(
      () => message(id),
      (m) => m.status === 'delivered',
      { what: `${type} delivered` },
    );
    const entry = (await inbox(receiver)).find((e) => e.message_id === id);
    expect(entry.type).toBe(type);
  });

  it('answers 404 Device not found for a number that is not one of the account’s devices', async () => {
    const res = await gw.request('POST', '/messages', {
      device: '6281500009999',
      receiver: '6281599990003',
      type: 'chat',
      params: { text: 'x' },
    });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ code: 404, status: 404, message: 'Device not found' });
  });

  it('answers 400 Device not connected for a device that is not paired', async () => {
    const id = (await gw.request('POST', '/devices', { package: 'BETA', name: 'idle', phone: '6281500000002' })).body
      .data.id;
    expect(id).toBeGreaterThan(0);
    const res = await gw.request('POST', '/messages', {
      device: '6281500000002',
      receiver: '6281599990003',
      type: 'chat',
      params: { text: 'x' },
    });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ code: 400, status: 400, message: 'Device not connected' });
  });

  it('keeps per-device order under parallel acceptance', async () => {
    const receiver = '6281599990010';
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, i) => send({ receiver, type: 'chat', params: { text: `n${i}` } })),
    );
    expect(answers.every((a) => a.status === 200)).toBe(true);
    const ids = answers.map((a) => a.body.data.id as string).sort();
    const received = await waitFor(
      () => inbox(receiver),
      (entries) => entries.length === 40,
      // Order is what this checks, not speed: 40 sends take about 5 s on PostgreSQL under load.
      { what: '40 received', timeoutMs: 30_000 },
    );
    expect(received.map((e) => e.message_id)).toEqual(ids);
  });

  it('fails a message to an unregistered number (0000) and gives its quota unit back', async () => {
    const before = (await gw.request('GET', '/devices?per_page=100')).body.data.find((d: any) => d.phone === sender);
    const res = await send({ receiver: '6281599990000', type: 'chat', params: { text: 'nobody' } });
    const failed = await waitFor(
      () => message(res.body.data.id),
      (m) => m.status === 'failed',
      { what: 'failed' },
    );
    expect(failed.failed_reason).toMatch(/not registered/);
    expect(failed.failed_at).not.toBeNull();
    const after = (await gw.request('GET', '/devices?per_page=100')).body.data.find((d: any) => d.phone === sender);
    expect(after.subscription.quote_used).toBe(before.subscription.quote_used);
  });

  it('leaves a message to a blocking number (0001) sent, never delivered', async () => {
    const res = await send({
      receiver: '6281599980001',
      type: 'chat',
      params: { text: 'blocked' },
    });
    const sent = await waitFor(
      () => message(res.body.data.id),
      (m) => m.status === 'sent',
      { what: 'sent' },
    );
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect((await message(sent.id)).status).toBe('sent');
  });

  it('delivers to an offline number (0003) only when it comes online', async () => {
    const receiver = '6281599970003';
    const res = await send({ receiver, type: 'chat', params: { text: 'later' } });
    await waitFor(
      () => message(res.body.data.id),
      (m) => m.status === 'sent',
      { what: 'sent' },
    );
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect((await message(res.body.data.id)).status).toBe('sent');
    await gw.request('POST', '/sandbox/phones', { phone: receiver, online: true });
    await waitFor(
      () => message(res.body.data.id),
      (m) => m.status === 'delivered',
      { what: 'delivered once online' },
    );
  });

  it('retries a transient refusal (0004) with the same id and delivers it once', async () => {
    const receiver = '6281599960004';
    const res = await send({ receiver, type: 'chat', params: { text: 'retry me' } });
    await waitFor(
      () => message(res.body.data.id),
      (m) => m.status === 'delivered',
      { what: 'delivered after retry' },
    );
    const row = await gw.app.store.db
      .selectFrom('messages')
      .select('attempts')
      .where('id', '=', res.body.data.id)
      .executeTakeFirst();
    expect(row?.attempts).toBe(1);
    expect((await inbox(receiver)).filter((e) => e.message_id === res.body.data.id)).toHaveLength(1);
  });

  it('answers the first answer again for a repeated Idempotency-Key, and 409 for another body', async () => {
    const body = { receiver: '6281599990020', type: 'chat', params: { text: 'once' } };
    const first = await send(body, { 'idempotency-key': 'order-1' });
    const again = await send(
      { params: { text: 'once' }, type: 'chat', receiver: '6281599990020' },
      { 'idempotency-key': 'order-1' },
    );
    expect(again).toEqual(first);
    const other = await send({ ...body, params: { text: 'twice' } }, { 'idempotency-key': 'order-1' });
    expect(other.status).toBe(409);
    expect(other.body).toEqual({ code: 409, status: 409, message: 'Idempotency key reuse', error: expect.any(String) });
    await waitFor(
      () => inbox('6281599990020'),
      (entries) => entries.length >= 1,
    );
    const stored = await gw.app.store.db
      .selectFrom('messages')
      .select('id')
      .where('receiver', '=', '6281599990020')
      .execute();
    expect(stored).toHaveLength(1);
  });

  it('looks messages up by id and lists them newest first with a cursor', async () => {
    expect((await gw.request('GET', '/messages/01ZZZZZZZZZZZZZZZZZZZZZZZZ')).body).toEqual({
      code: 404,
      status: 404,
      message: 'Message not found',
    });
    const other = await gw.app.services.accounts.createAccount('messages-other');
    const otherToken = (await gw.app.services.accounts.createToken(other.id, 't')).token;
    const mine = (await send({ receiver: '6281599990030', type: 'chat', params: { text: 'mine' } })).body.data.id;
    expect((await gw.request('GET', `/messages/${mine}`, undefined, otherToken)).body).toEqual({
      code: 404,
      status: 404,
      message: 'Message not found',
    });

    const page1 = await gw.request('GET', '/messages?limit=2');
    expect(page1.body.data).toHaveLength(2);
    expect(page1.body.data[0].id > page1.body.data[1].id).toBe(true);
    const page2 = await gw.request('GET', `/messages?limit=2&cursor=${page1.body.next_cursor}`);
    expect(page2.body.data[0].id < page1.body.data[1].id).toBe(true);
    const failed = await gw.request('GET', '/messages?status=failed');
    expect(failed.body.data.every((m: any) => m.status === 'failed')).toBe(true);
    expect((await gw.request('GET', '/messages?cursor=!!')).body.message).toBe('Validation failed');
  });

  it('lists only read or only unread messages, with the other filters and the cursor', async () => {
    const phone = '6281599990031';
    const ids: string[] = [];
    for (const text of ['r1', 'u1', 'r2', 'u2']) {
      ids.push((await send({ receiver: phone, type: 'chat', params: { text } })).body.data.id);
    }
    await waitFor(
      async () => Promise.all(ids.map(message)),
      (all) => all.every((m) => m.status === 'delivered'),
      { what: 'all delivered' },
    );
    const readIds = [ids[0]!, ids[2]!];
    for (const id of readIds) {
      expect((await gw.request('POST', `/sandbox/phones/${phone}/read`, { message_id: id })).status).toBe(200);
    }
    await waitFor(
      async () => Promise.all(readIds.map(message)),
      (all) => all.every((m) => m.read_at !== null),
      { what: 'read receipts' },
    );
    const texts = async (query: string) => {
      const answer = await gw.request('GET', `/messages?device=${sender}&${query}`);
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      return answer.body;
    };
    const read = await texts('read=true&limit=100');
    expect(read.data.every((m: any) => m.read_at !== null)).toBe(true);
    expect(read.data.filter((m: any) => m.receiver === phone).map((m: any) => m.message)).toEqual(['r2', 'r1']);
    const unread = await texts('read=false&direction=outgoing&status=delivered&limit=100');
    expect(unread.data.every((m: any) => m.read_at === null && m.status === 'delivered')).toBe(true);
    expect(unread.data.filter((m: any) => m.receiver === phone).map((m: any) => m.message)).toEqual(['u2', 'u1']);
    // The cursor keeps the filter.
    const first = await texts('read=true&limit=1');
    expect(first.data[0].message).toBe('r2');
    const next = await texts(`read=true&limit=1&cursor=${first.next_cursor}`);
    expect(next.data[0].message).toBe('r1');
    expect((await gw.request('GET', '/messages?read=maybe')).body).toMatchObject({ message: 'Validation failed' });
  });
});

describe.skipIf(noStoreAvailable)('quota', () => {
  it('200 parallel sends against a quota of 50 accept exactly 50', async () => {
    const gw = await startGateway({ build, config: { sendIntervalMs: 0 } });
    try {
      const device = await createPairedDevice(gw, '6281600000001');
      await gw.app.store.db.updateTable('devices').set({ quota_limit: 50 }).where('id', '=', device.id).execute();
      const answers = await Promise.all(
        Array.from({ length: 200 }, (_, i) =>
          gw.request('POST', '/messages', {
            device: device.phone,
            receiver: '6281699990001',
            type: 'chat',
            params: { text: `q${i}` },
          }),
        ),
      );
      expect(answers.filter((a) => a.status === 200)).toHaveLength(50);
      const refused = answers.filter((a) => a.status === 403);
      expect(refused).toHaveLength(150);
      expect(refused[0]!.body).toMatchObject({ code: 403, status: 403, message: 'Quota exceeded' });
      const after = (await gw.request('GET', `/devices/${device.id}`)).body.data;
      expect(after.subscription).toEqual({ quote_available: '0', quote_used: '50' });
      const stored = await gw.app.store.db
        .selectFrom('messages')
        .select('id')
        .where('device_id', '=', device.id)
        .execute();
      expect(stored).toHaveLength(50);
    } finally {
      await gw.close();
    }
  });
});
