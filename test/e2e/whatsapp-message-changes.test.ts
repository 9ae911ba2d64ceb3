// Issue 26 end to end: the built gateway on the whatsapp network against the stand-in. A phone's reaction, edit and
// delete for everyone, sent over the wire as WhatsApp phones send them, arrive as `message.reaction`,
// `message.edited` and `message.deleted` naming the gateway's id of the message (an incoming one, or one the device
// sent), and the stored message shows them; a change sent right behind its message is recorded after it.
// SQLite only (vitest.config.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../helpers/wait.js';
import { startStandinWorld, WAIT, type StandinWorld } from './standin-harness.js';

const ME = '15552360001';
const FRIEND = '15552360002';

let world: StandinWorld;

const phone = async (what: string, body: Record<string, unknown>) => {
  const answer = await world.standin.call('POST', `/control/phones/${FRIEND}/${what}`, body);
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  return answer.body.id as string;
};
const event = (type: string, match: (e: any) => boolean = () => true) =>
  waitFor(
    () => world.hooks.events().find((e) => e.type === type && match(e)),
    (e) => e !== undefined,
    { ...WAIT, what: type },
  );

beforeAll(async () => {
  world = await startStandinWorld(26);
  await world.startGateway();
  await world.pairedDevice('changes', ME);
});

afterAll(async () => {
  await world?.stop();
});

describe('reactions, edits and deletes from WhatsApp phones', () => {
  it('a phone reacts right after writing, then edits and deletes its message', async () => {
    const networkId = await phone('messages', { to: ME, text: 'dinner at 7?' });
    // No waiting for the gateway: the reaction follows the message on the wire.
    await phone('reactions', { message_id: networkId, emoji: '🍝' });
    const incoming = await event('message.incoming', (e) => e.data.message === 'dinner at 7?');
    const id = incoming.data.id as string;
    const reaction = await event('message.reaction', (e) => e.data.message_id === id);
    expect(reaction.data).toEqual({ message_id: id, from: FRIEND, emoji: '🍝' });

    await phone('edits', { message_id: networkId, text: 'dinner at 8?' });
    expect((await event('message.edited', (e) => e.data.message_id === id)).data).toEqual({
      message_id: id,
      text: 'dinner at 8?',
    });
    await phone('deletes', { message_id: networkId });
    expect((await event('message.deleted', (e) => e.data.message_id === id)).data).toEqual({ message_id: id });

    const stored = await world.message(id);
    expect(stored).toMatchObject({
      message: 'dinner at 8?',
      reactions: [{ from: FRIEND, emoji: '🍝' }],
      edited_at: expect.any(String),
      deleted_at: expect.any(String),
    });
    // None of it became a message of its own.
    const listed = (await world.api('GET', '/messages?direction=incoming')).body.data as any[];
    expect(listed.map((m) => m.id)).toEqual([id]);
  });

  it('a phone reacts to a message the device sent, and takes the reaction away', async () => {
    const sent = await world.api('POST', '/messages', {
      device: ME,
      receiver: FRIEND,
      type: 'chat',
      params: { text: 'on my way' },
    });
    expect(sent.status, JSON.stringify(sent.body)).toBe(200);
    const ours = sent.body.data.id as string;
    const received = await waitFor(
      async () => ((await world.phone(FRIEND)).inbox as any[]).find((m) => m.text === 'on my way'),
      (m) => m !== undefined,
      { ...WAIT, what: 'the phone received it' },
    );
    await phone('reactions', { message_id: received.id, emoji: '👍' });
    expect((await event('message.reaction', (e) => e.data.message_id === ours)).data).toEqual({
      message_id: ours,
      from: FRIEND,
      emoji: '👍',
    });
    expect((await world.message(ours)).reactions).toEqual([{ from: FRIEND, emoji: '👍' }]);
    await phone('reactions', { message_id: received.id, emoji: '' });
    await event('message.reaction', (e) => e.data.message_id === ours && e.data.emoji === '');
    expect((await world.message(ours)).reactions).toBeUndefined();
  });
});
