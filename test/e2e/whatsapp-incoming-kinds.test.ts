// Issue 26 (DECISIONS 15, incoming messages carry every kind), end to end: the built gateway on the whatsapp network
// against the stand-in. A phone sends a sticker, a voice note, a named location, a contact card and two, polls
// (versions 1 and 3), a reply to the device's own message and to one it received, and a text mentioning people
// (one by number, one by a LID the device has learnt, one by a LID it has not, and in a group one by a LID the
// group names): each is stored as its kind and announced as `message.incoming` with `params.quoted` and
// `params.mentions`. SQLite only (vitest.config.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../helpers/wait.js';
import { startStandinWorld, WAIT, type StandinWorld } from './standin-harness.js';

const ME = '15552360001';
const FRIEND = '15552360002';
/** Known to the device by number and LID (it wrote with both), so a mention of its LID is named by number. */
const KNOWN = '15552360003';
const STRANGER = '15552360004';

let world: StandinWorld;

const phoneSends = async (body: Record<string, unknown>): Promise<string> => {
  const sent = await world.standin.call('POST', `/control/phones/${FRIEND}/messages`, { to: ME, ...body });
  expect(sent.status, JSON.stringify(sent.body)).toBe(200);
  return sent.body.id as string;
};
/** The `message.incoming` event's data for the message the network names `networkId`, checked against the store. */
const arrived = async (networkId: string, what: string) => {
  const event = await waitFor(
    () =>
      world.hooks
        .events()
        .find((e) => e.type === 'message.incoming' && e.data?.sender === FRIEND && seen.get(e.data.id) === undefined),
    (e) => e !== undefined,
    { ...WAIT, what },
  );
  seen.set(event.data.id, networkId);
  // Media's URL is signed afresh on each read and its download moves on (whatsapp-incoming-media.test.ts).
  const { file_url: _readUrl, media: _readMedia, ...read } = await world.message(event.data.id);
  const { file_url: _eventUrl, media: _eventMedia, ...announced } = event.data;
  expect(read).toEqual(announced);
  return event.data;
};
const seen = new Map<string, string>();

beforeAll(async () => {
  world = await startStandinWorld(11);
  await world.startGateway();
  await world.pairedDevice('kinds', ME);
});

afterAll(async () => {
  await world?.stop();
});

describe('incoming messages of every kind, through the stand-in', () => {
  it('a sticker and a voice note keep their mimetype; the voice note says ptt', async () => {
    const sticker = await arrived(
      await phoneSends({ sticker: { url: world.filesUrl, mimetype: 'image/webp' } }),
      'the sticker',
    );
    expect(sticker).toMatchObject({ type: 'sticker', message: null, params: { mimetype: 'image/webp' } });
    const voice = await arrived(
      await phoneSends({ audio: { url: world.filesUrl, mimetype: 'audio/ogg; codecs=opus' }, ptt: true }),
      'the voice note',
    );
    expect(voice).toMatchObject({ type: 'audio', params: { mimetype: 'audio/ogg; codecs=opus', ptt: true } });
  });

  it('a location with its name and address', async () => {
    const place = await arrived(
      await phoneSends({ location: { latitude: 52.52, longitude: 13.405, name: 'Alexanderplatz', address: 'Berlin' } }),
      'the location',
    );
    expect(place).toMatchObject({
      type: 'location',
      params: {
        location: { degreesLatitude: 52.52, degreesLongitude: 13.405, name: 'Alexanderplatz', address: 'Berlin' },
      },
    });
  });

  it('one contact card, and two, each with its name and number', async () => {
    const one = await arrived(await phoneSends({ contacts: [{ name: 'Ana', phone: '4915100000001' }] }), 'one card');
    expect(one).toMatchObject({ type: 'contact', params: { contacts: [{ name: 'Ana', phones: ['4915100000001'] }] } });
    const two = await arrived(
      await phoneSends({
        contacts: [
          { name: 'Ana', phone: '4915100000001' },
          { name: 'Budi', phone: '6281200000002' },
        ],
      }),
      'two cards',
    );
    expect(two.params.contacts).toEqual([
      { name: 'Ana', phones: ['4915100000001'] },
      { name: 'Budi', phones: ['6281200000002'] },
    ]);
  });

  it('polls, version 1 and version 3', async () => {
    const v1 = await arrived(
      await phoneSends({ poll: { name: 'Lunch?', options: ['Rice', 'Soup'], selectable_count: 1, version: 1 } }),
      'the v1 poll',
    );
    expect(v1).toMatchObject({
      type: 'poll',
      message: 'Lunch?',
      params: { name: 'Lunch?', options: ['Rice', 'Soup'], selectable_count: 1 },
    });
    const v3 = await arrived(
      await phoneSends({ poll: { name: 'Days?', options: ['Mon', 'Tue', 'Wed'], selectable_count: 0 } }),
      'the v3 poll',
    );
    expect(v3.params).toEqual({ name: 'Days?', options: ['Mon', 'Tue', 'Wed'], selectable_count: 3 });
  });

  it("a reply names the quoted message: the device's own by our id, a received one by its stored id", async () => {
    const sent = await world.api('POST', '/messages', {
      device: ME,
      receiver: FRIEND,
      type: 'chat',
      params: { text: 'we open at nine' },
    });
    expect(sent.status, JSON.stringify(sent.body)).toBe(200);
    const ours = sent.body.data.id as string;
    const networkIdOfOurs = await waitFor(
      async () => ((await world.phone(FRIEND)).inbox as any[]).find((m) => m.text === 'we open at nine')?.id,
      (id) => typeof id === 'string',
      { ...WAIT, what: 'our message at the phone' },
    );
    const toOurs = await arrived(
      await phoneSends({ text: 'great', reply_to: { id: networkIdOfOurs, participant: ME, text: 'we open at nine' } }),
      'the reply to ours',
    );
    expect(toOurs.params).toEqual({ text: 'great', quoted: { message_id: ours, network_id: networkIdOfOurs } });

    const question = await phoneSends({ text: 'one more thing' });
    const stored = await arrived(question, 'the message replied to');
    const toTheirs = await arrived(
      await phoneSends({ text: 'and this', reply_to: { id: question, participant: FRIEND } }),
      'the reply to theirs',
    );
    expect(toTheirs.params.quoted).toEqual({ message_id: stored.id, network_id: question });
    const unknown = await arrived(await phoneSends({ text: 'and that', reply_to: { id: 'ABCDEF0123' } }), 'unknown');
    expect(unknown.params.quoted).toEqual({ message_id: null, network_id: 'ABCDEF0123' });
  });

  it('mentions: numbers as they are, a LID the device knows by its number, an unknown LID as its LID form', async () => {
    // KNOWN writes with its number beside its LID: the device's library learns the pair.
    const known = (await world.standin.call('POST', '/control/phones', { phone: KNOWN })).body.lid as string;
    const stranger = (await world.standin.call('POST', '/control/phones', { phone: STRANGER })).body.lid as string;
    const hello = await world.standin.call('POST', `/control/phones/${KNOWN}/messages`, {
      to: ME,
      text: 'hi from known',
    });
    expect(hello.status).toBe(200);
    await waitFor(
      () => world.hooks.events().find((e) => e.type === 'message.incoming' && e.data?.message === 'hi from known'),
      (e) => e !== undefined,
      { ...WAIT, what: "KNOWN's message" },
    );
    const mention = await arrived(
      await phoneSends({ text: '@a @b @c', mentions: ['4915100000009', known, stranger] }),
      'the mentions',
    );
    expect(mention.params).toEqual({ text: '@a @b @c', mentions: ['4915100000009', KNOWN, stranger] });
  });

  it('mentions in a group: a member known only by LID is named by the number the group gives', async () => {
    const member = '15552360005';
    const memberLid = (await world.standin.call('POST', '/control/phones', { phone: member })).body.lid as string;
    const group = await world.standin.call('POST', '/control/groups', {
      subject: 'kinds group',
      members: [FRIEND, ME, member],
    });
    expect(group.status, JSON.stringify(group.body)).toBe(200);
    const said = await world.standin.call('POST', `/control/phones/${FRIEND}/messages`, {
      to: group.body.id,
      text: 'hello @member',
      mentions: [memberLid],
    });
    expect(said.status, JSON.stringify(said.body)).toBe(200);
    const event = await waitFor(
      () => world.hooks.events().find((e) => e.type === 'message.incoming' && e.data?.message === 'hello @member'),
      (e) => e !== undefined,
      { ...WAIT, what: 'the group mention' },
    );
    seen.set(event.data.id, said.body.id as string);
    expect(event.data.params).toEqual({ text: 'hello @member', group_id: group.body.id, mentions: [member] });
  });
});
