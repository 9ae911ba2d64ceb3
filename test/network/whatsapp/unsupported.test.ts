// Issue 24, item 11: kinds the gateway has no shape for yet (group invitations, products) are stored
// as `unsupported` incoming messages named by WhatsApp's type, never dropped; /metrics counts them by type; the
// network's own bookkeeping (a key share) is no message. Stickers, contact cards and polls have their own kinds
// since issue 26 (incoming-kinds tests); reactions, edits and deletes are changes to messages
// (message-changes.test.ts); a poll vote is read as a vote (test/e2e/whatsapp-poll-votes.test.ts), never a message.
import { proto, type WAMessage } from 'baileys';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { noStoreAvailable, type TestGateway } from '../../helpers/gateway.js';
import { waitFor } from '../../helpers/wait.js';
import { type FakeSocket } from './fake-socket.js';
import { pairedDevice, startWhatsAppGateway } from './paired-gateway.js';

const KEYS = { current: Buffer.alloc(32, 0x25), previous: [] };
const PHONE = '4915100000081';
const FRIEND = '4917600000082';
const SLOW = { timeoutMs: 10_000 };
const TOKEN = 'mgw_test_token_for_the_default_account_0000';

const PROTOCOL = proto.Message.ProtocolMessage.Type;
const target = { remoteJid: `${PHONE}@s.whatsapp.net`, fromMe: true, id: '3EB0AAAAAAAAAAAAAAAAAA' };

/** What a phone sends, and the type name the gateway must keep. */
const KINDS: Array<[string, Record<string, unknown>, string]> = [
  ['a group invitation', { groupInviteMessage: { groupJid: '1203@g.us', inviteCode: 'x' } }, 'groupInviteMessage'],
  ['a product', { productMessage: { businessOwnerJid: `${FRIEND}@s.whatsapp.net` } }, 'productMessage'],
  [
    'a kind WhatsApp adds later, inside a view-once wrapper',
    { viewOnceMessageV2: { message: { eventMessage: { name: 'party' } } } },
    'eventMessage',
  ],
];

describe.skipIf(noStoreAvailable)('incoming kinds without a shape yet, on WhatsApp (scripted socket)', () => {
  let gw: TestGateway;
  let socket: FakeSocket;

  beforeAll(async () => {
    const at = await startWhatsAppGateway(KEYS, { sendIntervalMs: 0 });
    gw = at.gw;
    ({ socket } = await pairedDevice(at, PHONE, { name: 'kinds' }));
  });
  afterAll(() => gw?.close());

  function send(id: string, message: Record<string, unknown>): void {
    socket.ev.emit('messages.upsert', {
      type: 'notify',
      messages: [
        proto.WebMessageInfo.fromObject({
          key: { remoteJid: `${FRIEND}@s.whatsapp.net`, fromMe: false, id },
          message,
          messageTimestamp: 1_760_000_000,
        }) as WAMessage,
      ],
    });
  }

  it('each is stored as `unsupported` with the network type, announced, and counted on /metrics', async () => {
    // Bookkeeping first: it is no message, and the ones after it still all arrive.
    send('KEYSHARE', { protocolMessage: { type: PROTOCOL.APP_STATE_SYNC_KEY_SHARE } });
    // A vote that cannot be read (no secret kept for the poll) is left out: no message either.
    send('VOTE', {
      pollUpdateMessage: { pollCreationMessageKey: target, vote: { encPayload: 'AA==', encIv: 'AA==' } },
    });
    KINDS.forEach(([, message], i) => send(`KIND${i}`, message));
    const stored = (await waitFor(
      async () => (await gw.request('GET', '/messages?direction=incoming')).body.data as any[],
      (list) => list.length >= KINDS.length,
      { what: 'every kind stored', ...SLOW },
    )) as Array<{ type: string; sender: string; params: { network_type?: string }; message: unknown }>;
    expect(stored).toHaveLength(KINDS.length);
    const byType = stored.map((m) => m.params.network_type).sort();
    expect(byType).toEqual(KINDS.map(([, , name]) => name).sort());
    for (const message of stored) {
      expect(message).toMatchObject({ type: 'unsupported', sender: FRIEND });
      // Nothing of the content itself is kept (the poll's question).
      expect(JSON.stringify(message)).not.toMatch(/Lunch/);
    }
    const metrics = await gw.app.inject({
      method: 'GET',
      url: '/metrics',
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    expect(metrics.body).toContain('gateway_incoming_unsupported_total{type="groupInviteMessage"} 1');
    expect(metrics.body).not.toContain('pollUpdateMessage');
    expect(metrics.body).not.toContain('APP_STATE_SYNC_KEY_SHARE');
  });
});
