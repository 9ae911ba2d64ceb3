// Issue 26 on WhatsApp (scripted socket): a phone's reaction, edit and delete arrive once each, as
// `message.reaction`, `message.edited` and `message.deleted`, in the order the library handed them over, even when
// they come in the same batch as the message they concern; they are no longer stored as `unsupported` messages.
import { proto, type WAMessage } from 'baileys';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { noStoreAvailable, type TestGateway } from '../../helpers/gateway.js';
import { waitFor } from '../../helpers/wait.js';
import { verified, type Receiver } from '../../events/helpers.js';
import { type FakeSocket } from './fake-socket.js';
import { hookedWhatsAppDevice } from './paired-gateway.js';

const KEYS = { current: Buffer.alloc(32, 0x26), previous: [] };
const PHONE = '4915100000093';
const FRIEND = '4917600000094';
const FRIEND_JID = `${FRIEND}@s.whatsapp.net`;
const PROTOCOL = proto.Message.ProtocolMessage.Type;

describe.skipIf(noStoreAvailable)('reactions, edits and deletes on WhatsApp (scripted socket)', () => {
  let gw: TestGateway;
  let socket: FakeSocket;
  let hooks: Receiver;
  let device: { id: number; webhook_secret: string };

  beforeAll(async () => {
    ({ gw, hooks, socket, device } = await hookedWhatsAppDevice(KEYS, PHONE, 'changes'));
  });
  afterAll(async () => {
    await gw?.close();
    await hooks?.close();
  });

  const upsert = (id: string, message: Record<string, unknown>) =>
    proto.WebMessageInfo.fromObject({
      key: { remoteJid: FRIEND_JID, fromMe: false, id },
      message,
      messageTimestamp: 1_760_000_000,
    }) as WAMessage;
  // In the order they were recorded (event ids are time-ordered; deliveries may arrive in any order).
  const events = () =>
    hooks.received.map((r) => verified(device.webhook_secret, r)).sort((a, b) => (a.id < b.id ? -1 : 1));

  it('a message and the changes right behind it, in one batch: each recorded once, in order', async () => {
    const ownKey = { remoteJid: PHONE + '@s.whatsapp.net', fromMe: true, id: 'WAMSG0001' };
    socket.ev.emit('messages.upsert', {
      type: 'notify',
      messages: [
        upsert('WAMSG0001', { conversation: 'meet at 5' }),
        // The library has turned a reaction's key into the device's terms already: not the device's message.
        upsert('WAREACT01', { reactionMessage: { key: { ...ownKey, fromMe: false }, text: '👍' } }),
        upsert('WAEDIT001', {
          editedMessage: {
            message: {
              protocolMessage: {
                key: ownKey,
                type: PROTOCOL.MESSAGE_EDIT,
                editedMessage: { conversation: 'meet at 6' },
              },
            },
          },
        }),
        upsert('WAREVOKE1', { protocolMessage: { key: ownKey, type: PROTOCOL.REVOKE } }),
      ],
    });
    await waitFor(
      async () => events().map((e) => e.type),
      (types) => types.length >= 4,
      { what: 'every change announced', timeoutMs: 10_000 },
    );
    const stored = (await gw.request('GET', '/messages?direction=incoming')).body.data as any[];
    expect(stored).toHaveLength(1);
    const [message] = stored;
    expect(events().map((e) => [e.type, e.data.message_id ?? e.data.id])).toEqual([
      ['message.incoming', message.id],
      ['message.reaction', message.id],
      ['message.edited', message.id],
      ['message.deleted', message.id],
    ]);
    expect(events()[1].data).toEqual({ message_id: message.id, from: FRIEND, emoji: '👍' });
    expect(events()[2].data).toEqual({ message_id: message.id, text: 'meet at 6' });
    expect(message).toMatchObject({
      message: 'meet at 6',
      params: { text: 'meet at 6' },
      reactions: [{ from: FRIEND, emoji: '👍' }],
      edited_at: expect.any(String),
      deleted_at: expect.any(String),
    });

    // The library's own reports of the same changes are not taken a second time.
    socket.ev.emit('messages.update', [
      { key: { ...ownKey, fromMe: false }, update: { message: null, messageStubType: 1 } },
    ] as any);
    socket.ev.emit('messages.reaction', [
      { key: { ...ownKey, fromMe: false }, reaction: { key: { remoteJid: FRIEND_JID, id: 'WAREACT01' }, text: '👍' } },
    ] as any);
    socket.ev.emit('messages.upsert', { type: 'notify', messages: [upsert('WAMSG0002', { conversation: 'next' })] });
    await waitFor(
      async () => events().filter((e) => e.type === 'message.incoming').length,
      (n) => n === 2,
      { what: 'the next message', timeoutMs: 10_000 },
    );
    expect(events()).toHaveLength(5);
  });
});
