// docs/webhooks.md, Reactions, edits and deletes: what a phone does to a message after it was sent arrives as
// `message.reaction`, `message.edited` and `message.deleted`, and the stored message shows it (`reactions`,
// `edited_at`, `deleted_at`). Driven through the sandbox's phones, with a real webhook receiver.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSandboxNetwork } from '../../src/network/sandbox/index.js';
import { adminGroup } from '../groups/helpers.js';
import { noStoreAvailable, type TestGateway } from '../helpers/gateway.js';
import { waitFor } from '../helpers/wait.js';
import {
  phoneSends,
  quickWebhooks,
  sendChat,
  startHookedGateway,
  verified,
  waitForEvent,
  type Receiver,
} from './helpers.js';

const PHONE = '6287700000061';
const FRIEND = '6287799990061';
const OTHER = '6287799990062';

describe.skipIf(noStoreAvailable)('reactions, edits and deletes made on phones', () => {
  let gw: TestGateway;
  let hooks: Receiver;
  let device: any;
  const network = createSandboxNetwork({ deliveryDelayMs: 5, readDelayMs: 5 });
  beforeAll(async () => {
    ({ gw, hooks, device } = await startHookedGateway(PHONE, { build: { network, webhooks: quickWebhooks } }));
  });
  afterAll(async () => {
    await gw?.close();
    await hooks?.close();
  });

  const message = async (id: string) => (await gw.request('GET', `/messages/${id}`)).body.data;
  const incomingWith = async (text: string): Promise<any> =>
    waitFor(
      async () =>
        ((await gw.request('GET', '/messages?direction=incoming&limit=100')).body.data as any[]).find(
          (m) => m.message === text,
        ),
      (found) => found !== undefined,
      { what: `incoming "${text}"` },
    );
  const eventsOf = (type: string, id: string) =>
    hooks.received
      .map((r) => verified(device.webhook_secret, r))
      .filter((e) => e.type === type && e.data.message_id === id);
  const nth = async (type: string, id: string, n: number) => {
    await waitFor(
      async () => eventsOf(type, id),
      (list) => list.length >= n,
      { what: `${n} ${type} of ${id}` },
    );
    return eventsOf(type, id)[n - 1];
  };
  const post = (phone: string, what: string, body: unknown) =>
    gw.request('POST', `/sandbox/phones/${phone}/${what}`, body);

  it('a reaction on an incoming message: replaced by a later one, taken away with ""', async () => {
    await phoneSends(gw, FRIEND, PHONE, 'react to me');
    const target = await incomingWith('react to me');

    const reacted = await post(FRIEND, 'reactions', { message_id: target.id, emoji: '👍' });
    expect(reacted.status, JSON.stringify(reacted.body)).toBe(200);
    const first = await nth('message.reaction', target.id, 1);
    expect(first.data).toEqual({ message_id: target.id, from: FRIEND, emoji: '👍' });
    expect(first.device).toEqual({ id: device.id, phone: PHONE });
    expect((await message(target.id)).reactions).toEqual([{ from: FRIEND, emoji: '👍' }]);

    await post(FRIEND, 'reactions', { message_id: target.id, emoji: '❤️' });
    expect((await nth('message.reaction', target.id, 2)).data).toEqual({
      message_id: target.id,
      from: FRIEND,
      emoji: '❤️',
    });
    expect((await message(target.id)).reactions).toEqual([{ from: FRIEND, emoji: '❤️' }]);

    await post(FRIEND, 'reactions', { message_id: target.id, emoji: '' });
    expect((await nth('message.reaction', target.id, 3)).data).toEqual({
      message_id: target.id,
      from: FRIEND,
      emoji: '',
    });
    const after = await message(target.id);
    expect(after.reactions).toBeUndefined();
    // Nothing else about the message changed.
    expect({ ...after }).toEqual({ ...target });
  });

  it('a reaction on our own message, from the phone that received it', async () => {
    const ours = await sendChat(gw, PHONE, FRIEND, 'our news');
    await waitFor(
      () => message(ours),
      (m) => m.status === 'delivered',
      { what: 'delivered' },
    );
    const reacted = await post(FRIEND, 'reactions', { message_id: ours, emoji: '🎉' });
    expect(reacted.status, JSON.stringify(reacted.body)).toBe(200);
    expect((await nth('message.reaction', ours, 1)).data).toEqual({ message_id: ours, from: FRIEND, emoji: '🎉' });
    const shown = await message(ours);
    expect(shown.reactions).toEqual([{ from: FRIEND, emoji: '🎉' }]);
    expect(shown.direction).toBe('outgoing');

    // A phone that never received it cannot react to it.
    const stranger = await post(OTHER, 'reactions', { message_id: ours, emoji: '🎉' });
    expect(stranger.status).toBe(404);
    expect(stranger.body.message).toBe('Message not found');
  });

  it('reactions of two members to our group message, one per phone', async () => {
    const group = await adminGroup(gw, PHONE, 'Reactors', [FRIEND, OTHER]);
    const sent = await gw.request('POST', '/messages', {
      device: PHONE,
      receiver: group.network_id,
      type: 'chat',
      params: { text: 'team lunch?' },
    });
    expect(sent.status, JSON.stringify(sent.body)).toBe(200);
    const ours = sent.body.data.id as string;
    for (const member of [FRIEND, OTHER]) {
      await waitFor(
        async () => (await gw.request('GET', `/sandbox/phones/${member}`)).body.data.inbox as any[],
        (inbox) => inbox.some((entry) => entry.message_id === ours),
        { what: `${member} received it` },
      );
    }
    expect((await post(FRIEND, 'reactions', { message_id: ours, emoji: '🍕' })).status).toBe(200);
    await nth('message.reaction', ours, 1);
    expect((await post(OTHER, 'reactions', { message_id: ours, emoji: '🥗' })).status).toBe(200);
    expect((await nth('message.reaction', ours, 2)).data).toEqual({ message_id: ours, from: OTHER, emoji: '🥗' });
    expect((await message(ours)).reactions).toEqual([
      { from: FRIEND, emoji: '🍕' },
      { from: OTHER, emoji: '🥗' },
    ]);
    // Deleting the device's message is no phone's to do.
    expect((await post(FRIEND, 'deletes', { message_id: ours })).status).toBe(404);
  });

  it('an edit: the event carries the new text, the message shows it and edited_at', async () => {
    await phoneSends(gw, FRIEND, PHONE, 'see you at 5');
    const target = await incomingWith('see you at 5');
    const edited = await post(FRIEND, 'edits', { message_id: target.id, text: 'see you at 6' });
    expect(edited.status, JSON.stringify(edited.body)).toBe(200);
    const event = await nth('message.edited', target.id, 1);
    expect(event.data).toEqual({ message_id: target.id, text: 'see you at 6' });
    const shown = await message(target.id);
    expect(shown).toEqual({
      ...target,
      message: 'see you at 6',
      params: { text: 'see you at 6' },
      edited_at: expect.any(String),
    });
    expect(Date.parse(shown.edited_at)).toBeGreaterThanOrEqual(Date.parse(target.timestamp));
  });

  it('a delete for everyone: the message keeps its content and gets deleted_at', async () => {
    await phoneSends(gw, FRIEND, PHONE, 'oops, wrong chat');
    const target = await incomingWith('oops, wrong chat');
    const deleted = await post(FRIEND, 'deletes', { message_id: target.id });
    expect(deleted.status, JSON.stringify(deleted.body)).toBe(200);
    expect((await nth('message.deleted', target.id, 1)).data).toEqual({ message_id: target.id });
    expect(await message(target.id)).toEqual({ ...target, deleted_at: expect.any(String) });
  });

  it('a phone edits and deletes only its own messages; bad bodies are 400 naming the field', async () => {
    await phoneSends(gw, FRIEND, PHONE, 'mine to change');
    const target = await incomingWith('mine to change');
    const ours = await sendChat(gw, PHONE, FRIEND, 'ours to keep');

    const byOther = await post(OTHER, 'edits', { message_id: target.id, text: 'hijack' });
    expect(byOther.status).toBe(404);
    expect(byOther.body.message).toBe('Message not found');
    const ourEdited = await post(FRIEND, 'deletes', { message_id: ours });
    expect(ourEdited.status).toBe(404);
    const unknown = await post(FRIEND, 'reactions', { message_id: '01ARZ3NDEKTSV4RRFFQ69G5FAV', emoji: '👍' });
    expect(unknown.status).toBe(404);
    expect(unknown.body.message).toBe('Message not found');

    const noEmoji = await post(FRIEND, 'reactions', { message_id: target.id });
    expect(noEmoji.status).toBe(400);
    expect(JSON.stringify(noEmoji.body)).toContain('emoji');
    const emptyText = await post(FRIEND, 'edits', { message_id: target.id, text: '' });
    expect(emptyText.status).toBe(400);
    expect(JSON.stringify(emptyText.body)).toContain('text');
    const noId = await post(FRIEND, 'deletes', {});
    expect(noId.status).toBe(400);
    expect(JSON.stringify(noId.body)).toContain('message_id');
    const badPhone = await post('12', 'deletes', { message_id: target.id });
    expect(badPhone.status).toBe(400);

    // None of it changed the message.
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await message(target.id)).toEqual(target);
  });

  it('a change sent right after its message is never recorded before it', async () => {
    const sandbox = network.sandbox;
    const session = (
      await gw.app.store.db
        .selectFrom('devices')
        .select('network_session')
        .where('id', '=', device.id)
        .executeTakeFirstOrThrow()
    ).network_session!;
    const texts = Array.from({ length: 12 }, (_, i) => `quick ${i}`);
    for (const text of texts) {
      // The network's id of the message, straight from the network: no waiting for the gateway to store it.
      const { message_id: networkId } = await sandbox.sendFromPhone(FRIEND, PHONE, text, { session });
      await sandbox.changeFromPhone(
        FRIEND,
        { target: { id: networkId, fromMe: false }, kind: 'reaction', emoji: '⚡' },
        { session },
      );
    }
    for (const text of texts) {
      const target = await incomingWith(text);
      await nth('message.reaction', target.id, 1);
      expect((await message(target.id)).reactions).toEqual([{ from: FRIEND, emoji: '⚡' }]);
    }
  });

  it('a change to a message the gateway does not have is dropped: no event, nothing stored', async () => {
    const session = (
      await gw.app.store.db
        .selectFrom('devices')
        .select('network_session')
        .where('id', '=', device.id)
        .executeTakeFirstOrThrow()
    ).network_session!;
    const before = hooks.received.length;
    await network.sandbox.changeFromPhone(
      FRIEND,
      { target: { id: 'NOT-A-MESSAGE-WE-HAVE', fromMe: false }, kind: 'deleted' },
      { session },
    );
    // A message after it passes the same inbox: once it is announced, the change was handled.
    await phoneSends(gw, FRIEND, PHONE, 'after the unknown change');
    await incomingWith('after the unknown change');
    await waitForEvent(hooks, 'message.incoming', (e) => e.data.message === 'after the unknown change');
    const since = hooks.received.slice(before).map((r) => JSON.parse(r.body).type);
    expect(since).toEqual(['message.incoming']);
  });
});
