// Senders known only by their LID (docs/whatsapp.md, Senders known by LID), end to end: the built gateway on the
// whatsapp network against the stand-in. A phone that first writes from its LID alone (no phone number beside it)
// is delivered with the LID as its sender and in `from_lid`; once the gateway learns the number behind the LID (the
// phone writes with its number beside the LID), `contact.lid_resolved` says so once, and later messages, even
// LID-only ones, carry the phone. The server announcing the number (WhatsApp's linked-profiles notification) reports
// it just the same. A reply quoting the LID-addressed message reaches the phone as a quote of it; a group message
// from a LID-only participant is delivered the same way. SQLite only (vitest.config.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../helpers/wait.js';
import { startStandinWorld, WAIT, type StandinWorld } from './standin-harness.js';

const ME = '15552350001';
/** Known to the stand-in only after the device paired: the phone's first history sync did not map its LID. */
const STRANGER = '15552350002';
const MEMBER = '15552350003';
/** Made known by the server's own notification rather than by a message. */
const ANNOUNCED = '15552350004';

let world: StandinWorld;
let deviceId: number;
let strangerLid: string;
let firstNetworkId: string;

const phoneSays = async (from: string, body: Record<string, unknown>): Promise<string> => {
  const sent = await world.standin.call('POST', `/control/phones/${from}/messages`, body);
  expect(sent.status, JSON.stringify(sent.body)).toBe(200);
  return sent.body.id as string;
};
const incoming = (text: string) =>
  waitFor(
    () => world.hooks.events().find((e) => e.type === 'message.incoming' && e.data?.message === text),
    (e) => e !== undefined,
    { ...WAIT, what: `the incoming message "${text}"` },
  );
const reports = () => world.hooks.events().filter((e) => e.type === 'contact.lid_resolved');

beforeAll(async () => {
  world = await startStandinWorld(6);
  await world.startGateway();
  deviceId = await world.pairedDevice('lid', ME);
  const stranger = await world.standin.call('POST', '/control/phones', { phone: STRANGER });
  strangerLid = stranger.body.lid as string;
  expect(strangerLid).toMatch(/^\d+@lid$/);
});

afterAll(async () => {
  await world?.stop();
});

describe('senders known only by LID', () => {
  it('a LID-only sender is delivered with the LID as its sender and in from_lid', async () => {
    firstNetworkId = await phoneSays(STRANGER, { to: ME, text: 'from my lid', lid: true });
    const event = await incoming('from my lid');
    expect(event.data).toMatchObject({ direction: 'incoming', sender: strangerLid, from_lid: strangerLid });
    const stored = await world.message(event.data.id);
    expect(stored).toMatchObject({ sender: strangerLid, from_lid: strangerLid });
    expect(reports()).toEqual([]);
  });

  it('once the number behind the LID is learnt it is reported once, and later messages carry the phone', async () => {
    // The phone writes with its number beside its LID: the library learns the mapping from the envelope.
    await phoneSays(STRANGER, { to: ME, text: 'now with my number' });
    const event = await incoming('now with my number');
    expect(event.data).toMatchObject({ sender: STRANGER, from_lid: strangerLid });
    const report = await waitFor(reports, (r) => r.length === 1, { ...WAIT, what: 'contact.lid_resolved' });
    expect(report[0].data).toEqual({ lid: strangerLid, phone: STRANGER });
    // Recorded before the message that taught it (event ids are time-ordered; deliveries may arrive in any order).
    expect(report[0].id < event.id).toBe(true);
    // From the LID alone again: resolved through the mapping the library keeps.
    await phoneSays(STRANGER, { to: ME, text: 'lid again' });
    await phoneSays(STRANGER, { to: ME, text: 'lid only again', lid: true });
    const later = await incoming('lid only again');
    expect(later.data).toMatchObject({ sender: STRANGER, from_lid: strangerLid });
    // The message stored before stays as it was delivered; nothing is reported twice.
    const first = (await incoming('from my lid')).data.id as string;
    expect(await world.message(first)).toMatchObject({ sender: strangerLid, from_lid: strangerLid });
    expect(reports().filter((e) => e.data.lid === strangerLid)).toHaveLength(1);
    // Stored once, as every event is.
    const stored = await world.api('GET', `/devices/${deviceId}/webhook-deliveries?type=contact.lid_resolved`);
    expect(stored.status, JSON.stringify(stored.body)).toBe(200);
    expect(stored.body.data.map((d: any) => d.payload.data)).toEqual([{ lid: strangerLid, phone: STRANGER }]);
  });

  it('a reply quoting the LID-addressed message reaches the phone as a quote of it', async () => {
    const first = (await incoming('from my lid')).data.id as string;
    const reply = await world.api('POST', '/messages', {
      device: ME,
      receiver: STRANGER,
      type: 'chat',
      params: { text: 'replying to your lid message', quotedMessageId: first },
    });
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    const entry = await waitFor(
      async () => (await world.phone(STRANGER)).inbox.find((m: any) => m.text === 'replying to your lid message'),
      (m) => m !== undefined,
      { ...WAIT, what: 'the reply on the phone' },
    );
    expect(entry.quoted).toEqual({ id: firstNetworkId, participant: strangerLid });
  });

  it('the server announcing the number behind a LID (linked profiles) reports it, with no message needed', async () => {
    const announced = await world.standin.call('POST', '/control/phones', { phone: ANNOUNCED });
    const lid = announced.body.lid as string;
    await phoneSays(ANNOUNCED, { to: ME, text: 'announced later', lid: true });
    expect((await incoming('announced later')).data).toMatchObject({ sender: lid, from_lid: lid });
    const told = await world.standin.call('POST', `/control/phones/${ANNOUNCED}/reveal`, { to: ME });
    expect(told.body).toEqual({ told: 1 });
    await waitFor(
      () => reports().filter((e) => e.data.lid === lid),
      (r) => r.length === 1,
      { ...WAIT, what: 'contact.lid_resolved for the announced LID' },
    );
    expect(reports().find((e) => e.data.lid === lid).data).toEqual({ lid, phone: ANNOUNCED });
  });

  // The group's metadata (fetched when the group appears) names each member's number beside its LID, and the
  // gateway teaches it to the library (group-receipts.ts): a LID-only member is known by number from then on. The
  // member no metadata named yet is the fake socket's case (test/network/whatsapp/lid.test.ts).
  it("a group message from a LID-only participant is delivered with the number the group's metadata gave", async () => {
    const member = await world.standin.call('POST', '/control/phones', { phone: MEMBER });
    const memberLid = member.body.lid as string;
    const group = await world.standin.call('POST', '/control/groups', { subject: 'lid group', members: [ME, MEMBER] });
    expect(group.status, JSON.stringify(group.body)).toBe(200);
    await phoneSays(MEMBER, { to: group.body.id, text: 'lid in a group', lid: true });
    const event = await incoming('lid in a group');
    expect(event.data).toMatchObject({ sender: MEMBER, from_lid: memberLid });
    expect(event.data.params.group_id).toBe(group.body.id);
  });
});
