// docs/webhooks.md, Poll votes: a phone's vote on a poll arrives as `poll.vote {message_id, from, selected}`, a later
// vote replaces the earlier one, and the poll's message object shows `poll` with the tally of every option.
// Driven through the sandbox's phones (POST /sandbox/phones/{phone}/votes), with a real webhook receiver.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSandboxNetwork } from '../../src/network/sandbox/index.js';
import { adminGroup } from '../groups/helpers.js';
import { noStoreAvailable, type TestGateway } from '../helpers/gateway.js';
import { waitFor } from '../helpers/wait.js';
import { quickWebhooks, sendChat, startHookedGateway, verified, type Receiver } from './helpers.js';

const PHONE = '6287700000071';
const FRIEND = '6287799990071';
const OTHER = '6287799990072';
const STRANGER = '6287799990073';

describe.skipIf(noStoreAvailable)('votes on polls', () => {
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
  const votesOn = (id: string) =>
    hooks.received
      .map((r) => verified(device.webhook_secret, r))
      .filter((e) => e.type === 'poll.vote' && e.data.message_id === id);
  const nth = async (id: string, n: number) => {
    await waitFor(
      async () => votesOn(id),
      (list) => list.length >= n,
      { what: `${n} poll.vote of ${id}` },
    );
    return votesOn(id)[n - 1];
  };
  const vote = (phone: string, messageId: string, options: unknown) =>
    gw.request('POST', `/sandbox/phones/${phone}/votes`, { message_id: messageId, options });
  /** Our poll, delivered to `to` (a phone or a group's JID). */
  const ourPoll = async (to: string, params: Record<string, unknown>) => {
    const sent = await gw.request('POST', '/messages', { device: PHONE, receiver: to, type: 'poll', params });
    expect(sent.status, JSON.stringify(sent.body)).toBe(200);
    const id = sent.body.data.id as string;
    await waitFor(
      () => message(id),
      (m) => m.status === 'delivered',
      { what: 'poll delivered' },
    );
    return id;
  };

  it('a vote on our poll: the event, the tally; a later vote replaces it, the same one is not announced again', async () => {
    const poll = await ourPoll(FRIEND, { name: 'Lunch?', options: ['Rice', 'Noodles', 'Soup'] });
    expect((await message(poll)).poll).toEqual({
      name: 'Lunch?',
      options: ['Rice', 'Noodles', 'Soup'],
      selectable_count: 1,
      tally: [
        { option: 'Rice', count: 0, voters: [] },
        { option: 'Noodles', count: 0, voters: [] },
        { option: 'Soup', count: 0, voters: [] },
      ],
    });

    const voted = await vote(FRIEND, poll, ['Noodles']);
    expect(voted.status, JSON.stringify(voted.body)).toBe(200);
    expect(voted.body).toEqual({ code: 200, status: 200, message: 'Vote sent', data: null });
    const first = await nth(poll, 1);
    expect(first.data).toEqual({ message_id: poll, from: FRIEND, selected: ['Noodles'] });
    expect(first.device).toEqual({ id: device.id, phone: PHONE });
    expect((await message(poll)).poll.tally).toEqual([
      { option: 'Rice', count: 0, voters: [] },
      { option: 'Noodles', count: 1, voters: [FRIEND] },
      { option: 'Soup', count: 0, voters: [] },
    ]);

    expect((await vote(FRIEND, poll, ['Soup'])).status).toBe(200);
    expect((await nth(poll, 2)).data).toEqual({ message_id: poll, from: FRIEND, selected: ['Soup'] });
    expect((await message(poll)).poll.tally).toEqual([
      { option: 'Rice', count: 0, voters: [] },
      { option: 'Noodles', count: 0, voters: [] },
      { option: 'Soup', count: 1, voters: [FRIEND] },
    ]);

    // The same vote again, then a withdrawal: only the withdrawal is announced (the inbox keeps their order).
    expect((await vote(FRIEND, poll, ['Soup'])).status).toBe(200);
    expect((await vote(FRIEND, poll, [])).status).toBe(200);
    expect((await nth(poll, 3)).data).toEqual({ message_id: poll, from: FRIEND, selected: [] });
    expect(votesOn(poll)).toHaveLength(3);
    expect((await message(poll)).poll.tally.map((t: any) => t.count)).toEqual([0, 0, 0]);
  });

  it('a multi-select poll in a group: several voters, options in the poll’s order, at most selectable_count', async () => {
    const group = await adminGroup(gw, PHONE, 'Voters', [FRIEND, OTHER]);
    const poll = await ourPoll(group.network_id, {
      name: 'Days?',
      options: ['Mon', 'Tue', 'Wed'],
      selectable_count: 2,
    });
    expect((await vote(FRIEND, poll, ['Wed', 'Mon'])).status).toBe(200);
    expect((await nth(poll, 1)).data).toEqual({ message_id: poll, from: FRIEND, selected: ['Mon', 'Wed'] });
    expect((await vote(OTHER, poll, ['Wed'])).status).toBe(200);
    expect((await nth(poll, 2)).data).toEqual({ message_id: poll, from: OTHER, selected: ['Wed'] });
    const shown = await message(poll);
    expect(shown.poll).toEqual({
      name: 'Days?',
      options: ['Mon', 'Tue', 'Wed'],
      selectable_count: 2,
      tally: [
        { option: 'Mon', count: 1, voters: [FRIEND] },
        { option: 'Tue', count: 0, voters: [] },
        { option: 'Wed', count: 2, voters: [FRIEND, OTHER] },
      ],
    });
    const listed = (await gw.request('GET', '/messages?limit=100')).body.data.find((m: any) => m.id === poll);
    expect(listed.poll).toEqual(shown.poll);

    const tooMany = await vote(FRIEND, poll, ['Mon', 'Tue', 'Wed']);
    expect(tooMany.status).toBe(400);
    expect(tooMany.body).toEqual({
      code: 400,
      status: 400,
      message: 'Invalid vote',
      error: 'the poll allows at most 2 options',
    });
  });

  it('bad votes: 400 Invalid vote saying why, or 404, and nothing recorded', async () => {
    const poll = await ourPoll(FRIEND, { name: 'Colour?', options: ['Red', 'Blue'] });
    const chat = await sendChat(gw, PHONE, FRIEND, 'not a poll');
    await waitFor(
      () => message(chat),
      (m) => m.status === 'delivered',
      { what: 'chat delivered' },
    );
    const refused = async (phone: string, id: string, options: unknown, status: number, body: object) => {
      const res = await vote(phone, id, options);
      expect(res.status, JSON.stringify(res.body)).toBe(status);
      expect(res.body).toMatchObject(body);
    };
    await refused(FRIEND, poll, ['Green'], 400, { message: 'Invalid vote', error: 'the poll has no option "Green"' });
    await refused(FRIEND, poll, ['Red', 'Blue'], 400, {
      message: 'Invalid vote',
      error: 'the poll allows at most 1 option',
    });
    await refused(FRIEND, poll, ['Red', 'Red'], 400, { message: 'Invalid vote', error: 'an option is chosen twice' });
    await refused(FRIEND, chat, ['Red'], 400, { message: 'Invalid vote', error: 'that message is not a poll' });
    await refused(FRIEND, '01UNKNOWNMESSAGE0000000000', ['Red'], 404, { message: 'Message not found' });
    await refused(STRANGER, poll, ['Red'], 404, { message: 'Message not found' });
    for (const options of [undefined, 'Red', [1], [''], Array.from({ length: 13 }, (_, i) => `o${i}`)]) {
      const res = await vote(FRIEND, poll, options);
      expect(res.status, JSON.stringify(options)).toBe(400);
      expect(res.body.message).toBe('Validation failed');
      expect(Object.keys(res.body.errors)[0]).toMatch(/^options/);
    }
    const other = await gw.app.services.accounts.createAccount('votes-other');
    const otherToken = (await gw.app.services.accounts.createToken(other.id, 't')).token;
    const theirs = await gw.request(
      'POST',
      `/sandbox/phones/${FRIEND}/votes`,
      { message_id: poll, options: ['Red'] },
      otherToken,
    );
    expect(theirs.status).toBe(404);

    // A valid vote after all of them is the first one announced.
    expect((await vote(FRIEND, poll, ['Blue'])).status).toBe(200);
    expect((await nth(poll, 1)).data.selected).toEqual(['Blue']);
    expect(votesOn(poll)).toHaveLength(1);
    expect((await message(poll)).poll.tally).toEqual([
      { option: 'Red', count: 0, voters: [] },
      { option: 'Blue', count: 1, voters: [FRIEND] },
    ]);
  });

  it('a vote on an incoming poll, by the phone that sent it', async () => {
    const sent = await gw.request('POST', `/sandbox/phones/${OTHER}/messages`, {
      to: PHONE,
      type: 'poll',
      poll: { name: 'Meet?', options: ['Today', 'Tomorrow'] },
    });
    expect(sent.status, JSON.stringify(sent.body)).toBe(200);
    const incoming = await waitFor(
      async () =>
        ((await gw.request('GET', '/messages?direction=incoming&limit=100')).body.data as any[]).find(
          (m) => m.type === 'poll' && m.message === 'Meet?',
        ),
      (found) => found !== undefined,
      { what: 'incoming poll' },
    );
    expect(incoming.poll.tally).toEqual([
      { option: 'Today', count: 0, voters: [] },
      { option: 'Tomorrow', count: 0, voters: [] },
    ]);
    expect((await vote(OTHER, incoming.id, ['Tomorrow'])).status).toBe(200);
    expect((await nth(incoming.id, 1)).data).toEqual({ message_id: incoming.id, from: OTHER, selected: ['Tomorrow'] });
    expect((await message(incoming.id)).poll.tally[1]).toEqual({ option: 'Tomorrow', count: 1, voters: [OTHER] });
    // Outside a group, only its author votes on a phone's poll here.
    expect((await vote(FRIEND, incoming.id, ['Today'])).status).toBe(404);
  });
  it('an action on a poll answers with its tally (POST /messages/{id}/reaction)', async () => {
    const poll = await ourPoll(FRIEND, { name: 'Tea?', options: ['Yes', 'No'] });
    expect((await vote(FRIEND, poll, ['No'])).status).toBe(200);
    await nth(poll, 1);
    const reacted = await gw.request('POST', `/messages/${poll}/reaction`, { emoji: '👍' });
    expect(reacted.status, JSON.stringify(reacted.body)).toBe(200);
    expect(reacted.body.data.poll.tally).toEqual([
      { option: 'Yes', count: 0, voters: [] },
      { option: 'No', count: 1, voters: [FRIEND] },
    ]);
  });
});
