// docs/internals.md, Whatspie compatibility: reply by response. A receiver's 2xx answer to a message.incoming delivery, for the
// Whatspie formats (and for standard with webhook_reply), is sent back to the sender through
// POST /messages' own path: each shape and an array reach the sender's sandbox inbox once, quota is
// counted, refusals and ignored answers are noted on the attempt, and a repeated attempt (what a
// crash between the answer and the recorded outcome leaves, or a restart) sends nothing twice.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { noStoreAvailable, startGateway, type TestGateway } from '../helpers/gateway.js';
import { waitFor } from '../helpers/wait.js';
import { fixture, startServer, type TestServer } from '../outbound/helpers.js';
import { NOT_A_REPLY, REPLY_ANSWER_MAX_BYTES } from '../../src/events/reply-answer.js';
import { NOT_ONE_EMOJI } from '../../src/messages/reaction.js';
import {
  deliveries,
  pairedWithWebhookSettings,
  phoneSends,
  quickWebhooks,
  startReceiver,
  verified,
  type Receiver,
} from './helpers.js';

const build = {
  sandbox: { deliveryDelayMs: 5, readDelayMs: 5 },
  webhooks: quickWebhooks,
  dispatch: { retryBaseMs: 50, retryMaxMs: 200 },
};
const config = { allowPrivateUrls: true, sendIntervalMs: 0 };

/** A receiver answering each incoming message's text with the JSON `answers[text]` (200, empty when none). */
async function replyingReceiver(answers: Record<string, unknown>, standard = false): Promise<Receiver> {
  return startReceiver((request) => {
    const event = JSON.parse(request.body);
    const text = standard ? event.data?.message : (event.data?.message ?? event.message);
    const answer = answers[text];
    return {
      status: 200,
      body: answer === undefined ? '' : typeof answer === 'string' ? answer : JSON.stringify(answer),
    };
  });
}

describe.skipIf(noStoreAvailable)('reply by response', () => {
  let gw: TestGateway;
  let media: TestServer;
  const open: Array<{ close(): Promise<unknown> }> = [];
  let n = 0;
  const nextPhone = () => `62878000003${String(++n).padStart(2, '0')}`;
  const nextFriend = () => `62878999903${String(n).padStart(2, '0')}`;

  beforeAll(async () => {
    media = await startServer((req, res) => {
      res.writeHead(200, { 'content-type': 'image/png' });
      res.end(fixture('tiny.png'));
    });
    gw = await startGateway({ config, build });
  });
  afterAll(async () => {
    await gw?.close();
    await media?.close();
    for (const thing of open) await thing.close();
  });

  const inbox = async (phone: string, from: string) =>
    (((await gw.request('GET', `/sandbox/phones/${phone}`)).body.data?.inbox ?? []) as any[]).filter(
      (entry) => entry.from === from,
    );
  const device = async (id: number) => (await gw.request('GET', `/devices/${id}`)).body.data;

  /** A device with a receiver answering `answers`; a phone sends it `text`; answers the delivery once attempted. */
  async function exchange(
    text: string,
    answers: Record<string, unknown>,
    settings: { webhook_format?: string; webhook_reply?: boolean } = { webhook_format: 'whatspie_v1' },
    create: Record<string, unknown> = {},
    before?: (deviceId: number) => Promise<void>,
  ) {
    const standard = (settings.webhook_format ?? 'standard') === 'standard';
    const hooks = await replyingReceiver(answers, standard);
    open.push(hooks);
    const phone = nextPhone();
    const friend = nextFriend();
    const paired = await pairedWithWebhookSettings(gw, phone, { webhook_url: hooks.url, ...settings }, create);
    await before?.(paired.id);
    const quotaBefore = Number((await device(paired.id)).subscription.quote_used);
    const networkId = await phoneSends(gw, friend, phone, text);
    const [delivery] = await waitFor(
      () => deliveries(gw, paired.id, '&type=message.incoming'),
      (list) => list[0]?.status === 'delivered',
      { what: 'message.incoming delivered' },
    );
    return {
      hooks,
      phone,
      friend,
      device: paired,
      delivery,
      quotaBefore,
      networkId,
      attempt: delivery.attempts.at(-1),
    };
  }

  it('{type: "chat", body} reaches the sender once, counted against the quota, noted on the attempt', async () => {
    const {
      phone,
      friend,
      device: d,
      attempt,
      quotaBefore,
      hooks,
    } = await exchange('hello?', {
      'hello?': { type: 'chat', body: 'Thanks, we got your message' },
    });
    const [reply] = await waitFor(
      () => inbox(friend, phone),
      (list) => list.length === 1,
      { what: 'the reply in the sender’s inbox' },
    );
    expect(reply).toMatchObject({ type: 'chat', content: { text: 'Thanks, we got your message' } });
    expect(attempt.reply).toEqual({
      ignored: null,
      replies: [{ type: 'chat', status: 'queued', message_id: reply.message_id }],
    });
    const message = (await gw.request('GET', `/messages/${reply.message_id}`)).body.data;
    expect(message).toMatchObject({ direction: 'outgoing', type: 'chat', device: phone, receiver: friend });
    expect(Number((await device(d.id)).subscription.quote_used)).toBe(quotaBefore + 1);
    // The delivery the receiver verified is the v1 body.
    expect(verified(d.webhook_secret, hooks.received[0]!).message).toBe('hello?');
  });

  it('an array of image, file and chat replies: each queued, all reach the sender in order', async () => {
    const answer = [
      { type: 'image', params: { image: { url: media.url('/a.png') }, caption: 'our menu' } },
      { type: 'file', params: { document: { url: media.url('/menu.png') }, fileName: 'menu.png' } },
      { type: 'chat', body: 'anything else?', simulation: true },
    ];
    const {
      phone,
      friend,
      attempt,
      quotaBefore,
      device: d,
    } = await exchange('menu please', { 'menu please': answer }, { webhook_format: 'whatspie_v2' });
    const got = await waitFor(
      () => inbox(friend, phone),
      (list) => list.length === 3,
      { what: 'three replies' },
    );
    expect(got.map((entry) => entry.type)).toEqual(['image', 'file', 'chat']);
    expect(got[0].content).toMatchObject({ caption: 'our menu', mimetype: 'image/png' });
    expect(got[1].content).toMatchObject({ fileName: 'menu.png' });
    expect(got[2].content).toMatchObject({ text: 'anything else?' });
    // `simulation: true` asks for the typing indicator, as simulate_typing does.
    expect((await gw.request('GET', `/messages/${got[2].message_id}`)).body.data.simulate_typing).toBe(1);
    expect(attempt.reply.replies).toEqual(
      got.map((entry, i) => ({ type: answer[i]!.type, status: 'queued', message_id: entry.message_id })),
    );
    expect(Number((await device(d.id)).subscription.quote_used)).toBe(quotaBefore + 3);
  });

  it('a refused reply (bad image, a reaction not one emoji) is noted with its error; the others still go', async () => {
    const { phone, friend, attempt } = await exchange('bad image', {
      'bad image': [
        { type: 'image', params: { image: { url: 'ftp://example.test/a.png' } } },
        { type: 'chat', body: 'but this goes' },
        // A reaction is exactly one emoji: two, none or text are refused.
        { type: 'reaction', body: '👍👍' },
        { type: 'reaction', body: '' },
        { type: 'reaction', body: 'ok' },
      ],
    });
    const got = await waitFor(
      () => inbox(friend, phone),
      (list) => list.length === 1,
      { what: 'the one good reply' },
    );
    expect(attempt.reply).toEqual({
      ignored: null,
      replies: [
        {
          type: 'image',
          status: 'refused',
          error: expect.objectContaining({ code: 400, message: 'Invalid image URL' }),
        },
        { type: 'chat', status: 'queued', message_id: got[0].message_id },
        ...['👍👍', '', 'ok'].map(() => ({
          type: 'reaction',
          status: 'refused',
          error: expect.objectContaining({
            code: 400,
            message: 'Validation failed',
            errors: { body: [NOT_ONE_EMOJI] },
          }),
        })),
      ],
    });
  });

  it('{type: "reaction", body} reacts to the incoming message, counted against the quota', async () => {
    const {
      phone,
      friend,
      attempt,
      quotaBefore,
      networkId,
      device: d,
    } = await exchange('like this', { 'like this': { type: 'reaction', body: '👍🏽' } });
    const [reaction] = await waitFor(
      () => inbox(friend, phone),
      (list) => list.length === 1,
      { what: 'the reaction in the sender’s inbox' },
    );
    // On the message the phone sent, by the id the phone knows it by; no quote, no text.
    expect(reaction).toMatchObject({ type: 'reaction', content: { emoji: '👍🏽', message_id: networkId } });
    expect(reaction.quoted).toBeUndefined();
    expect(attempt.reply).toEqual({
      ignored: null,
      replies: [{ type: 'reaction', status: 'queued', message_id: reaction.message_id }],
    });
    const [incoming] = (await gw.request('GET', `/messages?device=${phone}&direction=incoming`)).body.data;
    const message = (await gw.request('GET', `/messages/${reaction.message_id}`)).body.data;
    expect(message).toMatchObject({
      direction: 'outgoing',
      type: 'reaction',
      receiver: friend,
      message: '👍🏽',
      params: { emoji: '👍🏽', message_id: incoming.id },
    });
    expect(Number((await device(d.id)).subscription.quote_used)).toBe(quotaBefore + 1);
  });

  it('an answer that is not a reply is ignored and noted; nothing is sent', async () => {
    const { phone, friend, attempt, quotaBefore, device: d } = await exchange('ok?', { 'ok?': { ok: true } });
    expect(attempt).toMatchObject({ http_status: 200, error: null, reply: { ignored: NOT_A_REPLY, replies: [] } });
    expect(await inbox(friend, phone)).toEqual([]);
    expect(Number((await device(d.id)).subscription.quote_used)).toBe(quotaBefore);
  });

  it('an answer of 64 KiB is read; one byte more is ignored, unread', async () => {
    const padded = (bytes: number, body: string) => {
      const json = JSON.stringify({ type: 'chat', body });
      return json + ' '.repeat(bytes - Buffer.byteLength(json));
    };
    const { phone, friend, attempt } = await exchange('at the limit', {
      'at the limit': padded(REPLY_ANSWER_MAX_BYTES, 'at the limit'),
    });
    const [reply] = await waitFor(
      () => inbox(friend, phone),
      (list) => list.length === 1,
      { what: 'the reply of a 64 KiB answer' },
    );
    expect(attempt.reply.replies).toEqual([{ type: 'chat', status: 'queued', message_id: reply.message_id }]);
    const over = await exchange('over the limit', {
      'over the limit': padded(REPLY_ANSWER_MAX_BYTES + 1, 'over the limit'),
    });
    expect(over.attempt).toMatchObject({
      http_status: 200,
      error: null,
      reply: { ignored: 'the answer is larger than 64 KiB', replies: [] },
    });
    expect(await inbox(over.friend, over.phone)).toEqual([]);
  });

  it('with no quota left the reply is refused with Quota exceeded, and nothing is sent', async () => {
    const {
      phone,
      friend,
      attempt,
      device: d,
    } = await exchange(
      'quota?',
      { 'quota?': { type: 'chat', body: 'no units left for this' } },
      { webhook_format: 'whatspie_v1' },
      { package: 'BETA' },
      async (id) => {
        await gw.app.store.db.updateTable('devices').set({ quote_used: 250 }).where('id', '=', id).execute();
      },
    );
    expect(attempt.reply).toEqual({
      ignored: null,
      replies: [
        {
          type: 'chat',
          status: 'refused',
          error: expect.objectContaining({ code: 403, message: 'Quota exceeded' }),
        },
      ],
    });
    expect(await inbox(friend, phone)).toEqual([]);
    expect((await device(d.id)).subscription).toEqual({ quote_available: '0', quote_used: '250' });
  });

  it('standard: the answer is not read unless webhook_reply is on', async () => {
    const answers = { 'standard?': { type: 'chat', body: 'standard reply' } };
    const off = await exchange('standard?', answers, {});
    expect(off.attempt).toMatchObject({ http_status: 200, format: 'standard', reply: null });
    const on = await exchange('standard?', answers, { webhook_reply: true });
    const [reply] = await waitFor(
      () => inbox(on.friend, on.phone),
      (list) => list.length === 1,
      { what: 'the standard reply' },
    );
    expect(reply.content).toMatchObject({ text: 'standard reply' });
    expect(on.attempt.reply.replies).toEqual([{ type: 'chat', status: 'queued', message_id: reply.message_id }]);
    expect(await inbox(off.friend, off.phone)).toEqual([]);
  });
});

describe.skipIf(noStoreAvailable)('reply by response across a restart', () => {
  const open: Array<{ close(): Promise<unknown> }> = [];
  afterAll(async () => {
    for (const thing of open.reverse()) await thing.close();
  });

  it('an attempt repeated after a reply and a reaction were queued (the outcome lost, then a restart) sends nothing twice', async () => {
    const PHONE = '6287800000399';
    const FRIEND = '6287899990399';
    let answer: unknown = [
      { type: 'chat', body: 'replied once' },
      { type: 'reaction', body: '👍' },
    ];
    const hooks = await startReceiver(() => ({ status: 200, body: JSON.stringify(answer) }));
    open.push(hooks);
    const first = await startGateway({ config, build });
    open.push(first);
    const paired = await pairedWithWebhookSettings(first, PHONE, {
      webhook_url: hooks.url,
      webhook_format: 'whatspie_v1',
    });
    await phoneSends(first, FRIEND, PHONE, 'are you there?');
    const inbox = async (gw: TestGateway) =>
      (((await gw.request('GET', `/sandbox/phones/${FRIEND}`)).body.data?.inbox ?? []) as any[]).filter(
        (entry) => entry.from === PHONE,
      );
    const [reply, reaction] = await waitFor(
      () => inbox(first),
      (list) => list.length === 2,
      { what: 'the reply and the reaction sent' },
    );
    expect(reaction).toMatchObject({ type: 'reaction', content: { emoji: '👍' } });
    // The phone may have the replies a moment before the attempt's outcome is written.
    const [delivery] = await waitFor(
      () => deliveries(first, paired.id),
      (list) => list[0]?.status === 'delivered',
      { what: 'the delivery recorded as delivered' },
    );
    await first.close({ keepStore: true });

    // What a crash between the queued replies and the recorded outcome leaves: the replies are stored
    // and sent, the delivery is still pending (a lease the restart clears).
    const second = await startGateway({ location: first.location, config, build });
    open.push(second);
    await second.app.store.db
      .updateTable('webhook_events')
      .set({ status: 'pending', delivered_at: null, next_attempt_at: 0, locked_until: null })
      .where('id', '=', delivery.id)
      .execute();
    await second.app.ready();
    const again = await waitFor(
      () => deliveries(second, paired.id),
      (list) => list[0]?.status === 'delivered' && list[0].attempts.length === 2,
      { what: 'delivered again after the restart' },
    );
    expect(hooks.byId(delivery.id)).toHaveLength(2);
    // The same reply: the message accepted the first time, not a new one.
    expect(again[0].attempts[1].reply).toEqual({
      ignored: null,
      replies: [
        { type: 'chat', status: 'queued', message_id: reply.message_id },
        { type: 'reaction', status: 'queued', message_id: reaction.message_id },
      ],
    });

    // A manual retry whose receiver now answers something else: that place was answered already.
    answer = [
      { type: 'chat', body: 'a different reply' },
      { type: 'reaction', body: '👎' },
    ];
    expect((await second.request('POST', `/devices/${paired.id}/webhook-deliveries/${delivery.id}/retry`)).status).toBe(
      200,
    );
    const third = await waitFor(
      () => deliveries(second, paired.id),
      (list) => list[0]?.status === 'delivered' && list[0].attempts.length === 3,
      { what: 'delivered a third time' },
    );
    expect(third[0].attempts[2].reply).toEqual({
      ignored: null,
      replies: [
        { type: 'chat', status: 'already_queued' },
        { type: 'reaction', status: 'already_queued' },
      ],
    });
    // One message in all (the in-process sandbox's inboxes start empty with each gateway, so the store tells).
    const messages = (await second.request('GET', `/messages?device=${PHONE}&direction=outgoing`)).body.data;
    expect(messages.map((m: any) => m.id).sort()).toEqual([reply.message_id, reaction.message_id].sort());
    expect(await inbox(second)).toEqual([]);
  });
});
