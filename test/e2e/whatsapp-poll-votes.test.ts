// Issue 26 end to end: the built gateway on the whatsapp network against the stand-in. A phone votes on the
// device's poll the way WhatsApp phones do (an encrypted `pollUpdateMessage`, stand-in votes.ts); the connector
// decrypts it with the poll's kept secret, and the gateway announces `poll.vote` with the option texts and shows
// the tally. The device's typing and presence reach the server as `chatstate` and `presence` stanzas.
// SQLite only (vitest.config.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../helpers/wait.js';
import { startStandinWorld, WAIT, type StandinWorld } from './standin-harness.js';

const ME = '15552370001';
const FRIEND = '15552370002';

let world: StandinWorld;
let deviceId: number;

const events = (type: string, match: (e: any) => boolean) =>
  world.hooks.events().filter((e) => e.type === type && match(e));
const nth = (type: string, match: (e: any) => boolean, n: number) =>
  waitFor(
    async () => events(type, match),
    (list) => list.length >= n,
    { ...WAIT, what: `${n} ${type}` },
  ).then((list) => list[n - 1]);

beforeAll(async () => {
  world = await startStandinWorld(27);
  await world.startGateway();
  deviceId = await world.pairedDevice('votes', ME);
  await world.standin.call('POST', '/control/phones', { phone: FRIEND });
});

afterAll(async () => {
  await world?.stop();
});

describe('poll votes and presence on the WhatsApp connector', () => {
  it('a phone’s vote on our poll is decrypted, announced with the option texts, and tallied; a later one replaces it', async () => {
    const sent = await world.api('POST', '/messages', {
      device: ME,
      receiver: FRIEND,
      type: 'poll',
      params: { name: 'Meeting day?', options: ['Mon', 'Wed', 'Fri'], selectable_count: 2 },
    });
    expect(sent.status, JSON.stringify(sent.body)).toBe(200);
    const id = sent.body.data.id as string;
    const entry = await waitFor(
      async () => (((await world.phone(FRIEND)).inbox ?? []) as any[]).find((e) => e.type === 'poll'),
      (found) => found !== undefined,
      { ...WAIT, what: 'the poll on the phone' },
    );
    const vote = async (options: string[]) => {
      const answer = await world.standin.call('POST', `/control/phones/${FRIEND}/votes`, {
        message_id: entry.id,
        options,
      });
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    };
    const ofPoll = (e: any) => e.data.message_id === id;

    await vote(['Fri', 'Mon']);
    expect((await nth('poll.vote', ofPoll, 1)).data).toEqual({
      message_id: id,
      from: FRIEND,
      selected: ['Mon', 'Fri'],
    });
    expect((await world.message(id)).poll).toEqual({
      name: 'Meeting day?',
      options: ['Mon', 'Wed', 'Fri'],
      selectable_count: 2,
      tally: [
        { option: 'Mon', count: 1, voters: [FRIEND] },
        { option: 'Wed', count: 0, voters: [] },
        { option: 'Fri', count: 1, voters: [FRIEND] },
      ],
    });

    await vote(['Wed']);
    expect((await nth('poll.vote', ofPoll, 2)).data).toEqual({ message_id: id, from: FRIEND, selected: ['Wed'] });
    expect((await world.message(id)).poll.tally.map((t: any) => t.count)).toEqual([0, 1, 0]);
    // The vote is not also taken as an incoming message.
    expect(events('message.incoming', (e) => e.data.sender === FRIEND)).toEqual([]);
  });

  it('typing and recording reach the server as chat states to the chat named', async () => {
    for (const state of ['composing', 'recording', 'paused']) {
      const res = await world.api('POST', `/devices/${deviceId}/typing`, { to: FRIEND, state });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
    }
    const seen = await waitFor(
      async () =>
        ((await world.standin.call('GET', '/control/presence')).body.presence as any[]).filter(
          (p) => p.to !== undefined,
        ),
      (list) => list.length >= 3,
      { ...WAIT, what: 'three chat states' },
    );
    expect(seen.map((p) => [p.from, p.state, p.to])).toEqual([
      [ME, 'composing', `${FRIEND}@s.whatsapp.net`],
      [ME, 'recording', `${FRIEND}@s.whatsapp.net`],
      [ME, 'paused', `${FRIEND}@s.whatsapp.net`],
    ]);
  });
});
