// Issue 24, item 6: senders known only by LID, through the in-process gateway on both stores, with the scripted
// socket where the stand-in does not reach: the library announcing a mapping (`lid-mapping.update`) reports the
// number once, only for a LID that delivered under its LID; the library's mapping store resolves a LID-only sender;
// a group participant known by LID alone is delivered under it. (The wire itself: test/e2e/whatsapp-lid.test.ts.)
import { proto, type WAMessage } from 'baileys';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startReceiver, type Receiver } from '../../events/helpers.js';
import { noStoreAvailable, type TestGateway } from '../../helpers/gateway.js';
import { waitForDevice } from '../../helpers/pairing.js';
import { waitFor } from '../../helpers/wait.js';
import { type FakeSocket } from './fake-socket.js';
import { scanOverFake, startWhatsAppGateway } from './paired-gateway.js';

const KEYS = { current: Buffer.alloc(32, 0x26), previous: [] };
const PHONE = '4915100000091';
const FRIEND = '4917600000092';
const OTHER = '4917600000093';
const FRIEND_LID = '77001122334455@lid';
const OTHER_LID = '77001122334466@lid';
const GROUP = '120363000000000077@g.us';
const SLOW = { timeoutMs: 10_000 };

describe.skipIf(noStoreAvailable)('senders known only by LID, on WhatsApp (scripted socket)', () => {
  let gw: TestGateway;
  let hooks: Receiver;
  let socket: FakeSocket;

  beforeAll(async () => {
    hooks = await startReceiver();
    const at = await startWhatsAppGateway(KEYS, { sendIntervalMs: 0, allowPrivateUrls: true });
    gw = at.gw;
    const created = await gw.request('POST', '/devices', { package: 'BUSINESS', name: 'lid' });
    const id = created.body.data.id as number;
    expect((await gw.request('PATCH', `/devices/${id}`, { webhook_url: hooks.url })).status).toBe(200);
    socket = await scanOverFake(at, id, `${PHONE}:4@s.whatsapp.net`);
    socket.connection({ connection: 'open' });
    await waitForDevice(gw, id, (d) => d.paired_status === 'PAIRED' && d.connected === true);
  });
  afterAll(async () => {
    await gw?.close();
    await hooks?.close();
  });

  function receive(id: string, key: Record<string, unknown>, text: string): void {
    const message = proto.WebMessageInfo.fromObject({
      key: { fromMe: false, id, ...key },
      message: { conversation: text },
      messageTimestamp: 1_760_000_000,
    }) as WAMessage;
    socket.ev.emit('messages.upsert', { type: 'notify', messages: [message] });
  }
  const stored = (text: string) =>
    waitFor(
      async () =>
        ((await gw.request('GET', '/messages?direction=incoming')).body.data as any[]).find((m) => m.message === text),
      (m) => m !== undefined,
      { what: `the message "${text}"`, ...SLOW },
    );
  const reports = () => hooks.events().filter((e) => e.type === 'contact.lid_resolved');

  it('a LID-only sender is stored under the LID; the library announcing its number reports it once', async () => {
    receive('L1', { remoteJid: FRIEND_LID }, 'who am I');
    expect(await stored('who am I')).toMatchObject({ sender: FRIEND_LID, from_lid: FRIEND_LID });
    // A mapping for a LID that never delivered under its LID is not reported: the client has nothing to connect.
    socket.ev.emit('lid-mapping.update', { lid: OTHER_LID, pn: `${OTHER}@s.whatsapp.net` });
    socket.ev.emit('lid-mapping.update', { lid: FRIEND_LID, pn: `${FRIEND}@s.whatsapp.net` });
    socket.ev.emit('lid-mapping.update', { lid: FRIEND_LID, pn: `${FRIEND}@s.whatsapp.net` });
    await waitFor(reports, (r) => r.length >= 1, { what: 'contact.lid_resolved', ...SLOW });
    // Something after them, so a second report would have been recorded by now.
    receive('L2', { remoteJid: `${OTHER}@s.whatsapp.net` }, 'after the announcements');
    await stored('after the announcements');
    await waitFor(
      () => hooks.events().filter((e) => e.type === 'message.incoming'),
      (events) => events.length === 2,
      { what: 'both incoming events', ...SLOW },
    );
    expect(reports().map((e) => e.data)).toEqual([{ lid: FRIEND_LID, phone: FRIEND }]);
    // The message stored before keeps the sender it was delivered with.
    expect(await stored('who am I')).toMatchObject({ sender: FRIEND_LID });
  });

  it("a LID-only sender whose number the library's mapping store knows arrives with the number", async () => {
    socket.lids.set(FRIEND_LID.split('@')[0]!, `${FRIEND}:0@s.whatsapp.net`);
    receive('L3', { remoteJid: FRIEND_LID }, 'known now');
    expect(await stored('known now')).toMatchObject({ sender: FRIEND, from_lid: FRIEND_LID });
  });

  it('a group participant known by LID alone is delivered under the LID, in its group', async () => {
    const lid = '77001122334477@lid';
    receive('L4', { remoteJid: GROUP, participant: lid }, 'in the group');
    const message = await stored('in the group');
    expect(message).toMatchObject({ sender: lid, from_lid: lid, params: { group_id: GROUP } });
  });

  // A phone may post the moment a group appears, before the gateway has read the group's metadata: the message
  // waits for it (group-senders.ts) instead of going out under the LID the metadata names a number for.
  it("a group participant known by LID alone takes the number the group's metadata names, read when needed", async () => {
    const lid = '77001122334488@lid';
    const group = '120363000000000078@g.us';
    socket.groups[group] = {
      id: group,
      subject: 'named members',
      participants: [{ id: lid, phoneNumber: `${OTHER}@s.whatsapp.net`, admin: null }],
    } as unknown as (typeof socket.groups)[string];
    receive('L5', { remoteJid: group, participant: lid }, 'named in the metadata');
    const message = await stored('named in the metadata');
    expect(message).toMatchObject({ sender: OTHER, from_lid: lid, params: { group_id: group } });
    expect(socket.calls.filter((c) => c.method === 'groupMetadata' && c.args[0] === group)).toHaveLength(1);
  });
});
