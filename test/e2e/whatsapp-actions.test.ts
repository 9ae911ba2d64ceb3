// Message actions end to end (docs/api.md, Message actions): the built gateway on the whatsapp network against the
// stand-in. A reaction, an edit and a delete for everyone of a message the device sent reach the stand-in's phone as
// WhatsApp carries them (a reaction message and protocol messages naming the message's id), after the message; marking
// a received message read sends a read receipt the phone notes on what it sent; a forwarded copy arrives marked
// forwarded. SQLite only (vitest.config.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../helpers/wait.js';
import { startStandinWorld, WAIT, type StandinWorld } from './standin-harness.js';

const ME = '15552660001';
const FRIEND = '15552660002';
const OTHER = '15552660003';

let world: StandinWorld;

beforeAll(async () => {
  world = await startStandinWorld(27);
  await world.startGateway();
  await world.pairedDevice('actions', ME, { webhook: false });
});

afterAll(async () => {
  await world?.stop();
});

const inboxOf = async (phone: string): Promise<any[]> => (await world.phone(phone)).inbox ?? [];
const inboxUntil = (phone: string, done: (entries: any[]) => boolean, what: string) =>
  waitFor(() => inboxOf(phone), done, { ...WAIT, what });

describe('message actions on the WhatsApp connector', () => {
  it('react, edit and delete for everyone reach the phone after the message, naming it', async () => {
    const sent = await world.api('POST', '/messages', {
      device: ME,
      receiver: FRIEND,
      type: 'chat',
      params: { text: 'meet at 9' },
    });
    expect(sent.status, JSON.stringify(sent.body)).toBe(200);
    const id = sent.body.data.id as string;
    await waitFor(
      () => world.message(id),
      (m) => m.status !== 'pending',
      { ...WAIT, what: 'the message sent' },
    );
    const ok = async (method: 'POST' | 'PATCH' | 'DELETE', path: string, body?: unknown) => {
      const answer = await world.api(method, path, body);
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      return answer.body;
    };
    expect((await ok('POST', `/messages/${id}/reaction`, { emoji: '👍' })).message).toBe('Reaction sent');
    expect((await ok('PATCH', `/messages/${id}`, { text: 'meet at 10' })).message).toBe('Message edited');
    expect((await ok('DELETE', `/messages/${id}`)).message).toBe('Message deleted');
    const entries = await inboxUntil(FRIEND, (e) => e.some((x) => x.type === 'delete'), 'the delete on the phone');
    const text = entries.find((e) => e.text === 'meet at 9');
    expect(text).toBeDefined();
    const actions = entries.filter((e) => ['reaction', 'edit', 'delete'].includes(e.type));
    expect(actions.map((e) => e.type)).toEqual(['reaction', 'edit', 'delete']);
    // Each names the message by the id the phone received it under.
    for (const action of actions) expect(action.target_id).toBe(text.id);
    expect(actions[0].emoji).toBe('👍');
    expect(actions[1].edited_text).toBe('meet at 10');
    expect(entries.indexOf(text)).toBeLessThan(entries.indexOf(actions[0]));
  });

  it('marking a received message read sends a read receipt; forwarding it arrives marked forwarded', async () => {
    const answer = await world.standin.call('POST', `/control/phones/${FRIEND}/messages`, {
      to: ME,
      text: 'are you there?',
    });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    const networkId = answer.body.id as string;
    const incoming = await waitFor(
      async () =>
        ((await world.api('GET', `/messages?device=${ME}&direction=incoming&limit=100`)).body.data as any[]).find(
          (m) => m.message === 'are you there?',
        ),
      (m) => m !== undefined,
      { ...WAIT, what: 'the incoming message' },
    );
    const read = await world.api('POST', `/messages/${incoming.id}/read`);
    expect(read.status, JSON.stringify(read.body)).toBe(200);
    await waitFor(
      async () => ((await world.phone(FRIEND)).sent as any[]).find((s) => s.id === networkId),
      (s) => s?.read_at !== undefined,
      { ...WAIT, what: 'the read receipt on the phone' },
    );
    const forwarded = await world.api('POST', `/messages/${incoming.id}/forward`, { receiver: OTHER });
    expect(forwarded.status, JSON.stringify(forwarded.body)).toBe(200);
    const [entry] = await inboxUntil(OTHER, (e) => e.length === 1, 'the forwarded copy');
    expect(entry).toMatchObject({ type: 'text', text: 'are you there?', forwarded: true });
  });
});
