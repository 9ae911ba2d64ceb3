// docs/whatsapp.md (lists and templates) on the WhatsApp connector, over the scripted socket and the
// real store (both SQLite and PostgreSQL): list and template go as text and
// the connection says so; a reply within 24 h that picks a choice is reported
// as list_reply / button_reply, also after a restart; the native form on
// request; a key rotation completes at connect.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { NetworkMessageContent } from '../../../src/network/network.js';
import { NATIVE_FLOW_NODES } from '../../../src/network/whatsapp/interactive.js';
import { Sealer } from '../../../src/network/whatsapp/seal.js';
import { toNetworkId } from '../../../src/network/whatsapp/ids.js';
import { noStoreAvailable } from '../../helpers/gateway.js';
import { sleep } from '../helpers.js';
import { KEYS, SLOW, WhatsAppHarness, ackEverySend, textFrom, upsert } from './harness.js';

const FRIEND = '4917600000002';
const STRANGER = '4917600000009';
const GROUP = '120363000000000001@g.us';
const LIST: NetworkMessageContent = {
  type: 'list',
  title: 'Menu',
  text: 'Pick one',
  buttonText: 'Open',
  sections: [
    {
      title: 'Food',
      rows: [
        { title: 'Rice', rowId: 'r1', description: 'hot' },
        { title: 'Tea', rowId: 'r2' },
      ],
    },
  ],
};
const TEMPLATE: NetworkMessageContent = {
  type: 'template',
  text: 'Help?',
  buttons: [
    { index: 1, urlButton: { displayText: 'Site', url: 'https://example.com' } },
    { index: 2, quickReplyButton: { displayText: 'Agent', id: 'agent' } },
  ],
};
const ids = Array.from({ length: 8 }, (_, i) => `01JQZ3Y8N5S7T9V1W3X5Y7Z9C${i}`);

describe.skipIf(noStoreAvailable)('WhatsApp: list and template (docs/whatsapp.md)', () => {
  let h: WhatsAppHarness;
  beforeEach(async () => {
    h = await WhatsAppHarness.open();
  });
  afterEach(async () => {
    await h.close();
  });

  async function offers(): Promise<Array<{ chat: string; payload: Uint8Array }>> {
    return h.store.db.selectFrom('network_offers').select(['chat', 'payload']).orderBy('chat').execute();
  }

  it('sent as text (the connection says so); a numbered or titled reply within 24 h is the choice, after a restart too', async () => {
    const device = await h.pair();
    expect(device.connection.capabilities).toEqual({ interactive: 'text' });
    ackEverySend(device.socket);
    await device.connection.sendMessage({ id: ids[0]!, to: FRIEND, content: LIST });
    const [send] = device.socket.calls.filter((c) => c.method === 'sendMessage');
    expect(send!.args[1]).toEqual({
      text: '*Menu*\nPick one\n\n*Food*\n1. Rice — hot\n2. Tea\n\nReply with a number to choose.',
    });
    // Kept sealed: the titles are not readable in the store.
    const [offer] = await offers();
    expect(offer!.chat).toBe(FRIEND);
    expect(Buffer.from(offer!.payload).includes(Buffer.from('Rice'))).toBe(false);

    textFrom(device.socket, 'A1', FRIEND, '2');
    textFrom(device.socket, 'A2', FRIEND, 'RICE');
    textFrom(device.socket, 'A3', FRIEND, '3');
    textFrom(device.socket, 'A4', STRANGER, '1');
    textFrom(device.socket, 'A5', FRIEND, 'thanks!');
    await device.recorder.wait('incoming_message', undefined, 4, SLOW);
    // In the order received, each as what it is.
    expect(device.recorder.of('incoming_message').map((e) => [e.id, e.from, e.content])).toEqual([
      ['A1', FRIEND, { type: 'list_reply', rowId: 'r2', title: 'Tea' }],
      ['A2', FRIEND, { type: 'list_reply', rowId: 'r1', title: 'Rice' }],
      ['A3', FRIEND, { type: 'chat', text: '3' }],
      ['A4', STRANGER, { type: 'chat', text: '1' }],
      ['A5', FRIEND, { type: 'chat', text: 'thanks!' }],
    ]);

    await h.restart();
    const back = await h.reconnect(device.session);
    textFrom(back.socket, 'B1', FRIEND, '1');
    const reply = await back.recorder.wait('incoming_message', undefined, 0, SLOW);
    expect(reply.content).toEqual({ type: 'list_reply', rowId: 'r1', title: 'Rice' });
  });

  it("the newest offer of a chat counts; a template's quick replies come back as button_reply; 24 h later, text again", async () => {
    const device = await h.pair();
    ackEverySend(device.socket);
    await device.connection.sendMessage({ id: ids[0]!, to: FRIEND, content: LIST });
    await device.connection.sendMessage({ id: ids[1]!, to: FRIEND, content: TEMPLATE });
    expect(device.socket.calls.filter((c) => c.method === 'sendMessage')[1]!.args[1]).toEqual({
      text: 'Help?\n\nSite: https://example.com\n1. Agent\n\nReply with a number to choose.',
    });
    textFrom(device.socket, 'C1', FRIEND, '1');
    textFrom(device.socket, 'C2', FRIEND, '2');
    textFrom(device.socket, 'C3', FRIEND, 'agent');
    await device.recorder.wait('incoming_message', undefined, 2, SLOW);
    expect(device.recorder.of('incoming_message').map((e) => e.content)).toEqual([
      { type: 'button_reply', id: 'agent', displayText: 'Agent' },
      { type: 'chat', text: '2' },
      { type: 'button_reply', id: 'agent', displayText: 'Agent' },
    ]);

    await h.store.db
      .updateTable('network_offers')
      .set({ created_at: Date.now() - 24 * 60 * 60 * 1000 - 1000 })
      .execute();
    textFrom(device.socket, 'C4', FRIEND, '1');
    const late = await device.recorder.wait('incoming_message', (e) => e.id === 'C4', 0, SLOW);
    expect(late.content).toEqual({ type: 'chat', text: '1' });
  });

  it('in a group, a member picking from what was offered there; a template of links only offers nothing', async () => {
    const device = await h.pair();
    ackEverySend(device.socket);
    await device.connection.sendMessage({ id: ids[0]!, to: GROUP, content: LIST });
    await device.connection.sendMessage({
      id: ids[1]!,
      to: STRANGER,
      content: { type: 'template', text: 'See', buttons: [TEMPLATE.buttons[0]!] },
    });
    expect((await offers()).map((o) => o.chat)).toEqual([GROUP]);
    textFrom(device.socket, 'G1', FRIEND, '2', GROUP);
    textFrom(device.socket, 'G2', FRIEND, '2');
    await device.recorder.wait('incoming_message', undefined, 1, SLOW);
    expect(device.recorder.of('incoming_message').map((e) => [e.group, e.content])).toEqual([
      [GROUP, { type: 'list_reply', rowId: 'r2', title: 'Tea' }],
      [undefined, { type: 'chat', text: '2' }],
    ]);
  });

  it('nothing is offered when the network did not take the message', async () => {
    const device = await h.pair();
    device.socket.onSend = async (_jid, _content, options) => {
      setImmediate(() => device.socket.ack(options.messageId!, '463'));
    };
    await expect(device.connection.sendMessage({ id: ids[0]!, to: FRIEND, content: LIST })).rejects.toMatchObject({
      kind: 'permanent',
    });
    expect(await offers()).toEqual([]);
  });

  it('deleted after 24 h by the background clean-up', async () => {
    await h.restart({ pruneIntervalMs: 20 });
    const device = await h.pair();
    ackEverySend(device.socket);
    await device.connection.sendMessage({ id: ids[0]!, to: FRIEND, content: LIST });
    await device.connection.sendMessage({ id: ids[1]!, to: STRANGER, content: LIST });
    await h.store.db
      .updateTable('network_offers')
      .set({ created_at: Date.now() - 25 * 60 * 60 * 1000 })
      .where('chat', '=', FRIEND)
      .execute();
    const deadline = Date.now() + SLOW;
    while ((await offers()).length > 1 && Date.now() < deadline) await sleep(20);
    expect((await offers()).map((o) => o.chat)).toEqual([STRANGER]);
  });

  describe('GATEWAY_WHATSAPP_NATIVE_INTERACTIVE=true (experimental)', () => {
    it('sends the native interactive form with its stanza node, offers nothing, and reads native replies', async () => {
      await h.restart({ nativeInteractive: true });
      const device = await h.pair();
      expect(device.connection.capabilities).toEqual({ interactive: 'native' });
      ackEverySend(device.socket);
      await device.connection.sendMessage({ id: ids[0]!, to: FRIEND, content: LIST });
      await device.connection.sendMessage({ id: ids[1]!, to: FRIEND, content: { type: 'chat', text: 'plain' } });
      expect(device.socket.calls.map((c) => c.method).filter((m) => m.endsWith('Message'))).toEqual([
        'relayMessage',
        'sendMessage',
      ]);
      const [jid, message, options] = device.socket.calls.find((c) => c.method === 'relayMessage')!.args as [
        string,
        { viewOnceMessage?: { message?: { interactiveMessage?: { body?: { text?: string } } } } },
        { messageId: string; additionalNodes: unknown },
      ];
      expect(jid).toBe(`${FRIEND}@s.whatsapp.net`);
      expect(message.viewOnceMessage?.message?.interactiveMessage?.body).toEqual({ text: 'Pick one' });
      expect(options).toEqual({ messageId: toNetworkId(ids[0]!), additionalNodes: NATIVE_FLOW_NODES });
      expect(await offers()).toEqual([]);
      // Kept for the network's resend requests like any other send.
      const resend = await device.socket.options.getMessage({ id: toNetworkId(ids[0]!)!, fromMe: true });
      expect(resend?.viewOnceMessage?.message?.interactiveMessage?.body?.text).toBe('Pick one');

      const reply = (id: string, name: string, params: object) =>
        device.socket.ev.emit('messages.upsert', {
          type: 'notify',
          messages: [
            upsert({
              key: { remoteJid: `${FRIEND}@s.whatsapp.net`, id },
              message: {
                interactiveResponseMessage: {
                  body: { text: 'Tea' },
                  nativeFlowResponseMessage: { name, paramsJson: JSON.stringify(params), version: 1 },
                },
              },
            }),
          ],
        });
      reply('N1', 'single_select', { id: 'r2' });
      reply('N2', 'quick_reply', { id: 'agent', title: 'Agent' });
      reply('N3', 'quick_reply', { nothing: true });
      textFrom(device.socket, 'N4', FRIEND, 'after');
      await device.recorder.wait('incoming_message', (e) => e.id === 'N4', 0, SLOW);
      expect(device.recorder.of('incoming_message').map((e) => [e.id, e.content])).toEqual([
        ['N1', { type: 'list_reply', rowId: 'r2', title: 'Tea' }],
        ['N2', { type: 'button_reply', id: 'agent', displayText: 'Agent' }],
        // A reply naming no choice is kept as what it is, never dropped without a trace.
        ['N3', { type: 'unsupported', networkType: 'interactiveResponseMessage' }],
        ['N4', { type: 'chat', text: 'after' }],
      ]);
    });
  });

  describe('key rotation (GATEWAY_NETWORK_KEY_PREVIOUS) completes at connect', () => {
    const NEW_KEY = Buffer.alloc(32, 0x17);

    it('every row sealed under the previous key is sealed again under the current one before the socket opens', async () => {
      const device = await h.pair();
      ackEverySend(device.socket);
      await device.connection.sendMessage({ id: ids[0]!, to: FRIEND, content: LIST });
      device.connection.close();
      // Signal keys, as the library writes them while it talks (beyond the first pre-keys made at pairing).
      const old = new Sealer(KEYS);
      for (const id of ['9001', '9002', '9003']) {
        const value = old.seal(Buffer.from(`{"key":${id}}`), { session: device.session, kind: 'pre-key', id });
        await h.store.db
          .insertInto('network_auth_keys')
          .values({ session_id: device.session, kind: 'pre-key', key_id: id, value })
          .execute();
      }

      await h.restart({ keys: { current: NEW_KEY, previous: [KEYS.current] } });
      const back = await h.reconnect(device.session);
      back.connection.close();

      // Only the new key from here on: every row opens under it.
      const onlyNew = new Sealer({ current: NEW_KEY, previous: [] });
      const place = (kind: string, id: string) => ({ session: device.session, kind, id });
      const auth = await h.store.db.selectFrom('network_auth').selectAll().executeTakeFirstOrThrow();
      expect(onlyNew.open(auth.creds!, place('creds', '')).current).toBe(true);
      const keys = await h.store.db.selectFrom('network_auth_keys').selectAll().execute();
      expect(keys.filter((k) => k.kind === 'pre-key' && ['9001', '9002', '9003'].includes(k.key_id))).toHaveLength(3);
      for (const row of keys) expect(onlyNew.open(row.value, place(row.kind, row.key_id)).current).toBe(true);
      const sent = await h.store.db.selectFrom('network_sent').selectAll().execute();
      expect(sent).toHaveLength(1);
      expect(sent[0]!.acked_at).not.toBeNull();
      expect(onlyNew.open(sent[0]!.payload, place('sent', sent[0]!.message_id)).current).toBe(true);
      const [offer] = await offers();
      expect(onlyNew.open(offer!.payload, place('offer', FRIEND)).current).toBe(true);

      // The previous key can go: the session connects and reads its offer.
      await h.restart({ keys: { current: NEW_KEY, previous: [] } });
      const last = await h.reconnect(device.session);
      textFrom(last.socket, 'K1', FRIEND, '1');
      const reply = await last.recorder.wait('incoming_message', undefined, 0, SLOW);
      expect(reply.content).toEqual({ type: 'list_reply', rowId: 'r1', title: 'Rice' });
    });
  });
});
