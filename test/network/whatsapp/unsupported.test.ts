// Issue 24, item 11: kinds the gateway has no shape for yet (stickers, contact cards, polls, poll votes,
// reactions, edits, deletes) are stored as `unsupported` incoming messages named by WhatsApp's type, never
// dropped; /metrics counts them by type; the network's own bookkeeping (a key share) is no message.
import { proto, type WAMessage } from 'baileys';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWhatsAppNetwork } from '../../../src/network/whatsapp/index.js';
import { noStoreAvailable, startGateway, type TestGateway } from '../../helpers/gateway.js';
import { waitForDevice } from '../../helpers/pairing.js';
import { waitFor } from '../../helpers/wait.js';
import { FakeWhatsApp, type FakeSocket } from './fake-socket.js';

const KEYS = { current: Buffer.alloc(32, 0x25), previous: [] };
const PHONE = '4915100000081';
const FRIEND = '4917600000082';
const SLOW = { timeoutMs: 10_000 };
const TOKEN = 'mgw_test_token_for_the_default_account_0000';

const PROTOCOL = proto.Message.ProtocolMessage.Type;
const target = { remoteJid: `${PHONE}@s.whatsapp.net`, fromMe: true, id: '3EB0AAAAAAAAAAAAAAAAAA' };

/** What a phone sends, and the type name the gateway must keep. */
const KINDS: Array<[string, Record<string, unknown>, string]> = [
  ['a sticker', { stickerMessage: { mimetype: 'image/webp' } }, 'stickerMessage'],
  ['a contact card', { contactMessage: { displayName: 'Ana', vcard: 'BEGIN:VCARD' } }, 'contactMessage'],
  ['contact cards', { contactsArrayMessage: { displayName: 'two', contacts: [] } }, 'contactsArrayMessage'],
  ['a poll', { pollCreationMessageV3: { name: 'Lunch?', options: [{ optionName: 'yes' }] } }, 'pollCreationMessageV3'],
  ['a poll vote', { pollUpdateMessage: { pollCreationMessageKey: target } }, 'pollUpdateMessage'],
  ['a reaction', { reactionMessage: { key: target, text: '👍' } }, 'reactionMessage'],
  [
    'an edit',
    { protocolMessage: { key: target, type: PROTOCOL.MESSAGE_EDIT, editedMessage: { conversation: 'new' } } },
    'protocolMessage.MESSAGE_EDIT',
  ],
  ['a delete', { protocolMessage: { key: target, type: PROTOCOL.REVOKE } }, 'protocolMessage.REVOKE'],
  [
    'a kind WhatsApp adds later, inside a view-once wrapper',
    { viewOnceMessageV2: { message: { eventMessage: { name: 'party' } } } },
    'eventMessage',
  ],
];

describe.skipIf(noStoreAvailable)('incoming kinds without a shape yet, on WhatsApp (scripted socket)', () => {
  let gw: TestGateway;
  const wa = new FakeWhatsApp();
  let socket: FakeSocket;

  beforeAll(async () => {
    gw = await startGateway({
      config: { sendIntervalMs: 0 },
      build: {
        network: (host) =>
          createWhatsAppNetwork({
            states: host.states,
            keys: KEYS,
            logger: pino({ level: 'silent' }),
            factory: wa.factory,
            ackTimeoutMs: 5000,
          }),
      },
    });
    const created = await gw.request('POST', '/devices', { package: 'BUSINESS', name: 'kinds' });
    const qr = gw.request('GET', `/devices/${created.body.data.id}/qr?response_type=url`);
    const first = await wa.socket(0);
    first.connection({ qr: '2@pairing-ref,noise,identity,adv' });
    expect((await qr).status).toBe(200);
    first.pairSuccess(`${PHONE}:4@s.whatsapp.net`);
    first.close(515, 'Stream Errored (restart required)');
    socket = await wa.socket(1);
    socket.connection({ connection: 'open' });
    await waitForDevice(gw, created.body.data.id, (d) => d.paired_status === 'PAIRED' && d.connected === true);
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
      // Nothing of the content itself is kept (the edit's new text, the reaction's emoji).
      expect(JSON.stringify(message)).not.toMatch(/new"|👍|Lunch/);
    }
    const metrics = await gw.app.inject({
      method: 'GET',
      url: '/metrics',
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    expect(metrics.body).toContain('gateway_incoming_unsupported_total{type="stickerMessage"} 1');
    expect(metrics.body).toContain('gateway_incoming_unsupported_total{type="protocolMessage.REVOKE"} 1');
    expect(metrics.body).not.toContain('APP_STATE_SYNC_KEY_SHARE');
  });
});
