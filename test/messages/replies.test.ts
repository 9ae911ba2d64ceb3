// docs/internals.md, Whatspie compatibility: `params.mentions` and `params.quotedMessageId` are carried to the network, never dropped:
// the sandbox phone's inbox shows the mentions and the message replied to; malformed mentions, mentions
// on types without text and quoted ids the device does not know are refused with the field named.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { noStoreAvailable, startGateway, type TestGateway } from '../helpers/gateway.js';
import { createPairedDevice } from '../helpers/pairing.js';
import { waitFor } from '../helpers/wait.js';

const build = { sandbox: { deliveryDelayMs: 5, readDelayMs: 5 } };
const PHONE_RULE =
  'must be a phone number in international format: digits only, country code first, no +, no leading 0, 7 to 15 digits';

describe.skipIf(noStoreAvailable)('mentions and replies', () => {
  let gw: TestGateway;
  let sender: string;
  let other: string;
  beforeAll(async () => {
    gw = await startGateway({ build, config: { sendIntervalMs: 0 } });
    sender = (await createPairedDevice(gw, '6281577000001')).phone;
    other = (await createPairedDevice(gw, '6281577000002')).phone;
  });
  afterAll(() => gw?.close());

  const send = (body: Record<string, unknown>) => gw.request('POST', '/messages', { device: sender, ...body });
  const received = (phone: string, id: string) =>
    waitFor(
      async () =>
        (((await gw.request('GET', `/sandbox/phones/${phone}`)).body.data?.inbox ?? []) as any[]).find(
          (entry) => entry.message_id === id,
        ),
      (entry) => entry !== undefined,
      { what: `message ${id} in ${phone}'s inbox` },
    );
  const refused = (res: { status: number; body: unknown }, message: string, errors: Record<string, string[]>) => {
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ code: 400, status: 400, message, errors });
  };

  it('mentions reach the inbox, echoed in the message; WhatsApp user ids read as their numbers', async () => {
    const res = await send({
      receiver: '6281577990011',
      type: 'chat',
      params: {
        text: 'hi @6281577990012',
        mentions: ['6281577990012', '6281577990013@s.whatsapp.net', '6281577990012'],
      },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data.params).toEqual({ text: 'hi @6281577990012', mentions: ['6281577990012', '6281577990013'] });
    expect((await gw.request('GET', `/messages/${res.body.data.id}`)).body.data.params.mentions).toEqual([
      '6281577990012',
      '6281577990013',
    ]);
    const entry = await received('6281577990011', res.body.data.id);
    expect(entry).toMatchObject({ type: 'chat', content: { text: 'hi @6281577990012' } });
    expect(entry.mentions).toEqual(['6281577990012', '6281577990013']);
    expect(entry.quoted).toBeUndefined();
  });

  it('mentions with a type that has no text (location, audio) are refused, not dropped', async () => {
    refused(
      await send({
        receiver: '6281577990014',
        type: 'location',
        params: { location: { degreesLatitude: 1, degreesLongitude: 2 }, mentions: ['6281577990015'] },
      }),
      'Validation failed',
      { 'params.mentions': ['is not allowed with location messages: they have no text to mention in'] },
    );
    refused(
      await send({
        receiver: '6281577990014',
        type: 'audio',
        params: { audio: { url: 'https://example.test/a.ogg' }, mentions: [] },
      }),
      'Validation failed',
      { 'params.mentions': ['is not allowed with audio messages: they have no text to mention in'] },
    );
  });

  it('a malformed mention is 400 Invalid phone number format naming it; more than 1024 are refused', async () => {
    refused(
      await send({
        receiver: '6281577990016',
        type: 'chat',
        params: { text: 'x', mentions: ['6281577990017', '+62815'] },
      }),
      'Invalid phone number format',
      { 'params.mentions.1': [PHONE_RULE] },
    );
    refused(
      await send({ receiver: '6281577990016', type: 'chat', params: { text: 'x', mentions: '6281577990017' } }),
      'Validation failed',
      { 'params.mentions': ['must be an array'] },
    );
    const many = Array.from({ length: 1025 }, (_, i) => `62815771${String(i).padStart(5, '0')}`);
    refused(
      await send({ receiver: '6281577990016', type: 'chat', params: { text: 'x', mentions: many } }),
      'Validation failed',
      { 'params.mentions': ['must have at most 1024 numbers'] },
    );
    const list = {
      title: 'T',
      text: 'Pick',
      buttonText: 'Open',
      sections: [{ title: 'S', rows: [{ title: 'R', rowId: 'r1' }] }],
      mentions: ['bad'],
    };
    // In a list, a bad mention is still named from the body's root.
    refused(await send({ receiver: '6281577990016', type: 'list', params: list }), 'Invalid phone number format', {
      'params.mentions.0': [PHONE_RULE],
    });
    const ok = await send({
      receiver: '6281577990016',
      type: 'list',
      params: { ...list, mentions: Array.from({ length: 1024 }, (_, i) => `62815772${String(i).padStart(5, '0')}`) },
    });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
  });

  it('a reply to a message the device sent shows the quoted message in the inbox', async () => {
    const first = await send({ receiver: '6281577990021', type: 'chat', params: { text: 'Order #12 shipped' } });
    await received('6281577990021', first.body.data.id);
    const reply = await send({
      receiver: '6281577990021',
      type: 'chat',
      params: { text: 'Tracking: 42', quotedMessageId: first.body.data.id },
    });
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    expect(reply.body.data.params).toEqual({ text: 'Tracking: 42', quotedMessageId: first.body.data.id });
    const entry = await received('6281577990021', reply.body.data.id);
    expect(entry.quoted).toEqual({ message_id: first.body.data.id, from: sender, text: 'Order #12 shipped' });
  });

  it('a reply to an incoming message, by the gateway’s id or the network’s, quotes its sender and text', async () => {
    const phone = '6281577990031';
    const wrote = await gw.request('POST', `/sandbox/phones/${phone}/messages`, {
      to: sender,
      text: 'Is it in stock?',
    });
    expect(wrote.status).toBe(200);
    const networkId = wrote.body.data.message_id as string;
    const incoming = await waitFor(
      async () =>
        ((await gw.request('GET', `/messages?direction=incoming&device=${sender}`)).body.data as any[]).find(
          (m) => m.sender === phone,
        ),
      (m) => m !== undefined,
      { what: 'the incoming message stored' },
    );
    expect(incoming.id).not.toBe(networkId);
    for (const quotedMessageId of [incoming.id, networkId]) {
      const chat = await send({ receiver: phone, type: 'chat', params: { text: 'Yes', quotedMessageId } });
      expect(chat.status, JSON.stringify(chat.body)).toBe(200);
      const entry = await received(phone, chat.body.data.id);
      expect(entry.quoted).toEqual({ message_id: networkId, from: phone, text: 'Is it in stock?' });
    }
  });

  it('an id the device does not know is refused naming params.quotedMessageId, never sent without the quote', async () => {
    const unknown = 'is not a message this device sent or received';
    refused(
      await send({
        receiver: '6281577990041',
        type: 'chat',
        params: { text: 'x', quotedMessageId: 'msg_group_12344' },
      }),
      'Validation failed',
      { 'params.quotedMessageId': [unknown] },
    );
    // Another device's message is not this device's to answer.
    const theirs = await gw.request('POST', '/messages', {
      device: other,
      receiver: '6281577990041',
      type: 'chat',
      params: { text: 'from the other device' },
    });
    expect(theirs.status).toBe(200);
    refused(
      await send({
        receiver: '6281577990041',
        type: 'chat',
        params: { text: 'x', quotedMessageId: theirs.body.data.id },
      }),
      'Validation failed',
      { 'params.quotedMessageId': [unknown] },
    );
    refused(
      await send({ receiver: '6281577990041', type: 'chat', params: { text: 'x', quotedMessageId: '' } }),
      'Validation failed',
      { 'params.quotedMessageId': ['must not be empty'] },
    );
    refused(
      await send({ receiver: '6281577990041', type: 'chat', params: { text: 'x', quotedMessageId: 'q'.repeat(129) } }),
      'Validation failed',
      { 'params.quotedMessageId': ['must be at most 128 characters'] },
    );
  });

  it('a message that failed cannot be replied to', async () => {
    // Numbers ending 0000 are not on the network: the send fails.
    const failed = await send({ receiver: '6281577990000', type: 'chat', params: { text: 'lost' } });
    await waitFor(
      async () => (await gw.request('GET', `/messages/${failed.body.data.id}`)).body.data.status,
      (status) => status === 'failed',
      { what: 'the send failed' },
    );
    refused(
      await send({
        receiver: '6281577990000',
        type: 'chat',
        params: { text: 'x', quotedMessageId: failed.body.data.id },
      }),
      'Validation failed',
      { 'params.quotedMessageId': ['is a message that failed to send: it cannot be replied to'] },
    );
  });
});
