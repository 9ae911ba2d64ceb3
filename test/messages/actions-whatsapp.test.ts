// Message actions on the WhatsApp connector (scripted socket, test/network/whatsapp/fake-socket.ts): an edit and a
// delete for everyone go as Baileys' protocol messages on the target's key, read receipts as readMessages (no message
// sent, no acknowledgement awaited), and a forwarded copy carries isForwarded in its context.
import { generateWAMessageContent, proto, type AnyMessageContent } from 'baileys';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { NetworkConnection } from '../../src/network/network.js';
import { toNetworkId } from '../../src/network/whatsapp/ids.js';
import { noStoreAvailable } from '../helpers/gateway.js';
import type { FakeSocket } from '../network/whatsapp/fake-socket.js';
import { ackEverySend, WhatsAppHarness } from '../network/whatsapp/harness.js';

const ME = '4915100000001';
const FRIEND = '4917600000002';
const OURS = '01JQZ3Y8N5S7T9V1W3X5Y7Z9A2';
const noUpload = async (): Promise<never> => {
  throw new Error('no uploads in these tests');
};

describe.skipIf(noStoreAvailable)('message actions on the WhatsApp connector', () => {
  let harness: WhatsAppHarness;

  beforeEach(async () => {
    harness = await WhatsAppHarness.open();
  });
  afterEach(async () => {
    await harness.close();
  });

  async function paired(): Promise<{ connection: NetworkConnection; socket: FakeSocket }> {
    const { connection, socket } = await harness.pair(1, ME);
    ackEverySend(socket);
    return { connection, socket };
  }

  const sentContents = (socket: FakeSocket) =>
    socket.calls.filter((c) => c.method === 'sendMessage').map((c) => c.args[1] as AnyMessageContent);

  it('an edit and a delete for everyone are protocol messages on our message’s key', async () => {
    const { connection, socket } = await paired();
    const target = { id: OURS, fromMe: true, chat: FRIEND };
    await connection.sendMessage({
      id: '01JQZ3Y8N5S7T9V1W3X5Y7Z9B1',
      to: FRIEND,
      content: { type: 'edit', text: 'new', target },
    });
    await connection.sendMessage({ id: '01JQZ3Y8N5S7T9V1W3X5Y7Z9B2', to: FRIEND, content: { type: 'delete', target } });
    const key = { remoteJid: `${FRIEND}@s.whatsapp.net`, fromMe: true, id: toNetworkId(OURS) };
    const [edit, del] = sentContents(socket);
    expect(edit).toEqual({ text: 'new', edit: key });
    expect(del).toEqual({ delete: key });
    const builtEdit = await generateWAMessageContent(edit!, { upload: noUpload });
    expect(builtEdit.protocolMessage).toMatchObject({ type: proto.Message.ProtocolMessage.Type.MESSAGE_EDIT, key });
    const builtDelete = await generateWAMessageContent(del!, { upload: noUpload });
    expect(builtDelete.protocolMessage).toMatchObject({ type: proto.Message.ProtocolMessage.Type.REVOKE, key });
  });

  it('read receipts go as readMessages with the received messages’ keys; nothing is sent as a message', async () => {
    const { connection, socket } = await paired();
    const targets = [
      { id: 'AAA111', fromMe: false, chat: FRIEND, author: FRIEND },
      { id: 'AAA222', fromMe: false, chat: FRIEND, author: FRIEND },
    ];
    await connection.sendMessage({ id: '01JQZ3Y8N5S7T9V1W3X5Y7Z9B3', to: FRIEND, content: { type: 'read', targets } });
    expect(sentContents(socket)).toEqual([]);
    const reads = socket.calls.filter((c) => c.method === 'readMessages');
    expect(reads.map((c) => c.args[0])).toEqual([
      [
        { remoteJid: `${FRIEND}@s.whatsapp.net`, fromMe: false, id: 'AAA111' },
        { remoteJid: `${FRIEND}@s.whatsapp.net`, fromMe: false, id: 'AAA222' },
      ],
    ]);
  });

  it('a forwarded copy is marked forwarded in its context; Baileys carries it into the message', async () => {
    const { connection, socket } = await paired();
    await connection.sendMessage({
      id: '01JQZ3Y8N5S7T9V1W3X5Y7Z9B4',
      to: FRIEND,
      content: { type: 'chat', text: 'pass it on' },
      forwarded: true,
    });
    const [content] = sentContents(socket);
    expect(content).toMatchObject({ text: 'pass it on', contextInfo: { isForwarded: true, forwardingScore: 1 } });
    const built = await generateWAMessageContent(content!, { upload: noUpload });
    expect(built.extendedTextMessage?.contextInfo).toMatchObject({ isForwarded: true, forwardingScore: 1 });
  });
});
