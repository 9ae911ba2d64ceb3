// docs/internals.md, Whatspie compatibility: the Whatspie webhook bodies, field by field, rendered from the stored standard event,
// which event types each format carries, and how a receiver's answer is read for replies (shapes and bounds).
import { describe, expect, it } from 'vitest';
import { answersWithReplies, carries, renderBody, webhookFormat } from '../../src/events/formats/index.js';
import {
  NOT_A_REPLY,
  REPLIES_PER_ANSWER_MAX,
  REPLY_ANSWER_MAX_BYTES,
  readReplies,
} from '../../src/events/reply-answer.js';

const DEVICE = { id: 7, phone: '6281200000001' };

function stored(type: string, data: Record<string, unknown>): string {
  return JSON.stringify({ id: 'evt_01TEST', type, device: DEVICE, created_at: '2026-11-22T10:00:00.000Z', data });
}

/** The message object of an incoming message, as messages/present.ts shows it. */
function incoming(overrides: Record<string, unknown> = {}, params: Record<string, unknown> = {}) {
  return {
    id: '01JINCOMING0000000000000000',
    status: 'delivered',
    type: 'chat',
    direction: 'incoming',
    device: DEVICE.phone,
    receiver: DEVICE.phone,
    sender: '6289876543210',
    message: 'Hello, I need help with my order',
    file_url: null,
    params: { text: 'Hello, I need help with my order', ...params },
    simulate_typing: 0,
    timestamp: '2026-11-22T10:00:01.500Z',
    sent_at: '2026-11-22T10:00:00.900Z',
    delivered_at: '2026-11-22T10:00:01.500Z',
    read_at: null,
    failed_at: null,
    failed_reason: null,
    ...overrides,
  };
}

const render = (format: string, type: string, data: Record<string, unknown>) => {
  const body = renderBody(webhookFormat(format), type, stored(type, data));
  return body === null ? null : JSON.parse(body);
};

describe('whatspie_v1', () => {
  it('a text: message, from, timestamp in Unix seconds (when sent), message_id, from_user', () => {
    expect(render('whatspie_v1', 'message.incoming', incoming())).toEqual({
      message: 'Hello, I need help with my order',
      from: '6289876543210',
      timestamp: 1795341600,
      message_id: '01JINCOMING0000000000000000',
      from_user: { name: '6289876543210', jid: '6289876543210@s.whatsapp.net' },
    });
  });

  it('a sender known only by LID (WhatsApp): from and from_user name the LID, the jid is the LID itself', () => {
    const lid = '77001122334455@lid';
    const body = render('whatspie_v1', 'message.incoming', incoming({ sender: lid, from_lid: lid }));
    expect(body).toMatchObject({ from: lid, from_user: { name: lid, jid: lid } });
  });

  it.each([
    ['image', 'imageMessage'],
    ['video', 'videoMessage'],
    ['audio', 'audioMessage'],
    ['file', 'documentMessage'],
  ])('%s: type %s and file {url, caption, fileName, mimetype}, url as the standard format gives it', (type, name) => {
    const data = incoming(
      { type, message: 'the caption' },
      { text: undefined, caption: 'the caption', mimetype: 'image/png' },
    );
    expect(render('whatspie_v1', 'message.incoming', data)).toEqual({
      message: 'the caption',
      from: '6289876543210',
      timestamp: 1795341600,
      message_id: '01JINCOMING0000000000000000',
      from_user: { name: '6289876543210', jid: '6289876543210@s.whatsapp.net' },
      type: name,
      file: { url: null, caption: 'the caption', fileName: null, mimetype: 'image/png' },
    });
  });

  it('media without a caption: message is empty, caption null', () => {
    const body = render(
      'whatspie_v1',
      'message.incoming',
      incoming({ type: 'audio', message: null }, { mimetype: 'audio/ogg' }),
    );
    expect(body.message).toBe('');
    expect(body.file).toEqual({ url: null, caption: null, fileName: null, mimetype: 'audio/ogg' });
  });

  it('in a group: from is the group, participant the sender', () => {
    const body = render('whatspie_v1', 'message.incoming', incoming({}, { group_id: '120363072789192130@g.us' }));
    expect(body).toEqual({
      message: 'Hello, I need help with my order',
      from: '120363072789192130@g.us',
      timestamp: 1795341600,
      message_id: '01JINCOMING0000000000000000',
      from_user: { name: '6289876543210', jid: '6289876543210@s.whatsapp.net' },
      participant: '6289876543210',
    });
  });

  it('a location: type locationMessage with the coordinates', () => {
    const location = { degreesLatitude: -6.2, degreesLongitude: 106.8 };
    const body = render('whatspie_v1', 'message.incoming', {
      ...incoming({ type: 'location', message: null }),
      params: { location },
    });
    expect(body.type).toBe('locationMessage');
    expect(body.location).toEqual(location);
    expect(body.message).toBe('');
  });

  it('carries incoming messages only', () => {
    for (const type of ['message.sent', 'message.delivered', 'message.read', 'message.failed', 'device.paired']) {
      expect(carries('whatspie_v1', type)).toBe(false);
      expect(render('whatspie_v1', type, incoming())).toBeNull();
    }
    expect(carries('whatspie_v1', 'message.incoming')).toBe(true);
  });
});

describe('whatspie_v2', () => {
  const outgoing = (overrides: Record<string, unknown>) =>
    incoming({ direction: 'outgoing', sender: null, receiver: '6289876543210', ...overrides });

  it('message_incoming: data is the v1 body', () => {
    expect(render('whatspie_v2', 'message.incoming', incoming())).toEqual({
      type: 'message_incoming',
      data: render('whatspie_v1', 'message.incoming', incoming()),
    });
  });

  it('message_read {message_id, read_at}', () => {
    const data = outgoing({ id: '01JOUT', status: 'delivered', read_at: '2026-11-22T10:05:00.000Z' });
    expect(render('whatspie_v2', 'message.read', data)).toEqual({
      type: 'message_read',
      data: { message_id: '01JOUT', read_at: '2026-11-22T10:05:00.000Z' },
    });
  });

  it('message_failed {message_id, status: "ERROR", reason}', () => {
    const data = outgoing({ id: '01JOUT', status: 'failed', failed_reason: 'USER_NOT_FOUND' });
    expect(render('whatspie_v2', 'message.failed', data)).toEqual({
      type: 'message_failed',
      data: { message_id: '01JOUT', status: 'ERROR', reason: 'USER_NOT_FOUND' },
    });
  });

  it('device_disconnected {device_id, status: "UNPAIRED", reason}', () => {
    expect(render('whatspie_v2', 'device.disconnected', { paired_status: 'UNPAIRED', reason: 'logged out' })).toEqual({
      type: 'device_disconnected',
      data: { device_id: 7, status: 'UNPAIRED', reason: 'logged out' },
    });
  });

  it('carries those four types only', () => {
    const carried = ['message.incoming', 'message.read', 'message.failed', 'device.disconnected'];
    for (const type of [
      'message.sent',
      'message.delivered',
      'device.paired',
      'device.qr_expired',
      'group.participants_added',
    ]) {
      expect(carries('whatspie_v2', type)).toBe(false);
    }
    for (const type of carried) expect(carries('whatspie_v2', type)).toBe(true);
  });
});

describe('standard', () => {
  it('is the stored text, byte for byte, for every type', () => {
    const text = stored('message.sent', { id: 'x', ü: 'ünïcode' });
    expect(renderBody('standard', 'message.sent', text)).toBe(text);
  });

  it('an unknown stored format reads as standard', () => {
    expect(webhookFormat('whatspie_v9')).toBe('standard');
    expect(webhookFormat(null)).toBe('standard');
  });
});

describe('which answers are read for replies', () => {
  it('Whatspie formats always, standard only with webhook_reply, message.incoming only', () => {
    expect(answersWithReplies('whatspie_v1', false, 'message.incoming')).toBe(true);
    expect(answersWithReplies('whatspie_v2', false, 'message.incoming')).toBe(true);
    expect(answersWithReplies('standard', false, 'message.incoming')).toBe(false);
    expect(answersWithReplies('standard', true, 'message.incoming')).toBe(true);
    expect(answersWithReplies('whatspie_v2', true, 'message.read')).toBe(false);
  });
});

describe('reading an answer for replies', () => {
  const read = (value: unknown) => readReplies({ text: typeof value === 'string' ? value : JSON.stringify(value) });

  it.each([
    [{ type: 'chat', body: 'Thanks!' }, [{ type: 'chat', body: 'Thanks!', simulation: false }]],
    [{ type: 'chat', body: 'typing', simulation: true }, [{ type: 'chat', body: 'typing', simulation: true }]],
    [
      { type: 'image', params: { image: { url: 'http://x/y.png' } } },
      [{ type: 'image', params: { image: { url: 'http://x/y.png' } } }],
    ],
    [
      { type: 'file', params: { document: { url: 'http://x/y.pdf' } } },
      [{ type: 'file', params: { document: { url: 'http://x/y.pdf' } } }],
    ],
    [{ type: 'reaction', body: '👍' }, [{ type: 'reaction', body: '👍' }]],
  ])('%j', (answer, replies) => {
    expect(read(answer)).toEqual({ replies });
  });

  it('an array of replies, in order', () => {
    expect(
      read([
        { type: 'chat', body: 'one' },
        { type: 'reaction', body: '👍' },
      ]),
    ).toEqual({
      replies: [
        { type: 'chat', body: 'one', simulation: false },
        { type: 'reaction', body: '👍' },
      ],
    });
  });

  it(`at most ${REPLIES_PER_ANSWER_MAX} replies; one more and the answer is ignored`, () => {
    const chat = { type: 'chat', body: 'x' };
    expect('replies' in read(Array(REPLIES_PER_ANSWER_MAX).fill(chat))).toBe(true);
    expect(read(Array(REPLIES_PER_ANSWER_MAX + 1).fill(chat))).toEqual({
      ignored: `the answer asks for ${REPLIES_PER_ANSWER_MAX + 1} replies; at most ${REPLIES_PER_ANSWER_MAX} are sent`,
    });
  });

  it.each([
    ['', 'the answer is empty'],
    ['  \n', 'the answer is empty'],
    ['ok', 'the answer is not JSON'],
    ['[]', 'the answer is an empty array'],
    ['{"status":"ok"}', NOT_A_REPLY],
    ['"chat"', NOT_A_REPLY],
    ['null', NOT_A_REPLY],
    ['{"type":"chat"}', NOT_A_REPLY],
    ['{"type":"chat","body":5}', NOT_A_REPLY],
    ['{"type":"image","params":"http://x/y.png"}', NOT_A_REPLY],
    ['{"type":"video","params":{}}', NOT_A_REPLY],
    ['[{"type":"chat","body":"fine"},{"type":"nope"}]', NOT_A_REPLY],
    ['{"__proto__":{"type":"chat","body":"x"}}', NOT_A_REPLY],
  ])('%j is ignored: %s', (text, ignored) => {
    expect(readReplies({ text })).toEqual({ ignored });
  });

  it(`an answer over ${REPLY_ANSWER_MAX_BYTES} bytes is ignored`, () => {
    expect(readReplies({ tooLarge: true })).toEqual({ ignored: 'the answer is larger than 64 KiB' });
  });
});
