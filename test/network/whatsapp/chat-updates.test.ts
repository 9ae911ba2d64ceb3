// DECISIONS 16, archive/pin/mute heard from the phone on WhatsApp (src/network/whatsapp/chats.ts, chatChanges; the
// gateway's side src/chats/phone-settings.ts): the library's `chats.update` from app-state sync, as Baileys emits
// it (archived, pinned: the pin's time or null, muteEndTime: ms, -1 always, null unmuted), becomes `chat_changed`
// and the chat list shows it. A LID chat is told under its number; status and newsletters are not chats.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MUTED_ALWAYS, chatChanges } from '../../../src/network/whatsapp/chats.js';
import { noStoreAvailable, type TestGateway } from '../../helpers/gateway.js';
import { waitFor } from '../../helpers/wait.js';
import type { FakeSocket } from './fake-socket.js';
import { pairedDevice, startWhatsAppGateway } from './paired-gateway.js';

const KEYS = { current: Buffer.alloc(32, 0x27), previous: [] };
const PHONE = '4915100000081';
const FRIEND = '4917600000082';
const OTHER = '4917600000083';
const GROUP = '120363000000000081@g.us';
const MUTE_END = Date.parse('2031-02-03T04:05:06.000Z');

describe('chats.update from app-state sync', () => {
  const lids = { getPNForLID: async (lid: string) => (lid === '777@lid' ? `${OTHER}@s.whatsapp.net` : null) };

  it('carries what each update names, and only that', async () => {
    expect(
      await chatChanges(
        [
          { id: `${FRIEND}@s.whatsapp.net`, archived: true },
          { id: GROUP, pinned: 1_700_000_000 },
          { id: `${FRIEND}@s.whatsapp.net`, pinned: null },
          { id: `${FRIEND}@s.whatsapp.net`, muteEndTime: MUTE_END },
          { id: GROUP, muteEndTime: -1 },
          { id: GROUP, muteEndTime: null, archived: false },
          { id: `${FRIEND}@s.whatsapp.net`, muteEndTime: Math.floor(MUTE_END / 1000) },
          { id: `${FRIEND}@s.whatsapp.net`, unreadCount: 0 },
        ],
        lids,
      ),
    ).toEqual([
      { type: 'chat_changed', chat: FRIEND, change: { archived: true } },
      { type: 'chat_changed', chat: GROUP, change: { pinned: true } },
      { type: 'chat_changed', chat: FRIEND, change: { pinned: false } },
      { type: 'chat_changed', chat: FRIEND, change: { mutedUntil: new Date(MUTE_END) } },
      { type: 'chat_changed', chat: GROUP, change: { mutedUntil: new Date(MUTED_ALWAYS) } },
      { type: 'chat_changed', chat: GROUP, change: { archived: false, mutedUntil: null } },
      { type: 'chat_changed', chat: FRIEND, change: { mutedUntil: new Date(MUTE_END) } },
    ]);
    expect(new Date(MUTED_ALWAYS).toISOString()).toBe('9999-12-31T23:59:59.999Z');
  });

  it('names a LID chat by its number when known; drops unknown LIDs, status, broadcasts and newsletters', async () => {
    expect(
      await chatChanges(
        [
          { id: '777@lid', archived: true },
          { id: '888@lid', archived: true },
          { id: 'status@broadcast', archived: true },
          { id: '1234567890@broadcast', pinned: 1 },
          { id: '120363000000000099@newsletter', archived: true },
        ],
        lids,
      ),
    ).toEqual([{ type: 'chat_changed', chat: OTHER, change: { archived: true } }]);
  });
});

describe.skipIf(noStoreAvailable)('the phone’s archive, pin and mute reach GET /chats (scripted socket)', () => {
  let gw: TestGateway;
  let socket: FakeSocket;
  beforeAll(async () => {
    const at = await startWhatsAppGateway(KEYS, { sendIntervalMs: 0 });
    gw = at.gw;
    ({ socket } = await pairedDevice(at, PHONE));
  });
  afterAll(() => gw?.close());

  const chat = async (id: string) =>
    ((await gw.request('GET', `/chats?device=${PHONE}&limit=100`)).body.data as any[]).find((c) => c.id === id);

  it('stores each change the phone made, the chat added when the gateway had none', async () => {
    expect(await chat(FRIEND)).toBeUndefined();
    socket.ev.emit('chats.update', [{ id: `${FRIEND}@s.whatsapp.net`, archived: true }]);
    socket.ev.emit('chats.update', [{ id: `${FRIEND}@s.whatsapp.net`, pinned: 1_700_000_000 }]);
    socket.ev.emit('chats.update', [{ id: `${FRIEND}@s.whatsapp.net`, muteEndTime: MUTE_END }]);
    const shown = await waitFor(
      () => chat(FRIEND),
      (c) => c?.muted_until !== null && c?.muted_until !== undefined && c.pinned === true && c.archived === true,
      { what: 'the phone’s changes stored' },
    );
    expect(shown).toEqual({
      id: FRIEND,
      type: 'user',
      name: null,
      last_message: null,
      unread_count: 0,
      archived: true,
      pinned: true,
      muted_until: new Date(MUTE_END).toISOString(),
    });

    socket.ev.emit('chats.update', [{ id: `${FRIEND}@s.whatsapp.net`, archived: false, muteEndTime: null }]);
    const after = await waitFor(
      () => chat(FRIEND),
      (c) => c?.archived === false,
      { what: 'unarchived' },
    );
    expect(after).toMatchObject({ archived: false, pinned: true, muted_until: null });
  });

  it('stores a burst of changes in the order the phone made them', async () => {
    for (let round = 0; round < 5; round++) {
      socket.ev.emit('chats.update', [{ id: GROUP, archived: true }]);
      socket.ev.emit('chats.update', [{ id: GROUP, archived: false }]);
      socket.ev.emit('chats.update', [{ id: GROUP, archived: true }]);
      socket.ev.emit('chats.update', [{ id: GROUP, archived: false, pinned: round === 4 ? 1_700_000_000 : null }]);
    }
    // The last change pins the group (round 4): once it is stored, every change before it is too.
    const shown = await waitFor(
      () => chat(GROUP),
      (c) => c?.pinned === true,
      { what: 'the last change stored' },
    );
    expect(shown).toMatchObject({ id: GROUP, type: 'group', archived: false, pinned: true });
  });
});
