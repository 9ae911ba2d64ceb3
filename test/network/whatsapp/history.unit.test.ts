// Issue 27 (DECISIONS 16): the WhatsApp connector's side of the history sync at pairing (history.ts): which messages
// of a chunk are kept (within the days limit, not status updates, both directions, media described only), the
// batches of 500 each handed over only once the one before was taken, and one end, told only after every batch was
// taken and no chunk came for SETTLE_MS after the final one.
import { proto, type WAMessage } from 'baileys';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { NetworkEvent } from '../../../src/network/network.js';
import { HistoryIntake, SETTLE_MS, historyMessageOf } from '../../../src/network/whatsapp/history.js';

const NOW = Date.UTC(2026, 10, 28, 12);
const DAY = 86_400_000;
const RECENT = proto.HistorySync.HistorySyncType.RECENT;

function message(n: number, { at = NOW - (n + 1) * 1000, fromMe = n % 2 === 1, chat = '4917600000082' } = {}) {
  return proto.WebMessageInfo.fromObject({
    key: { remoteJid: chat.includes('@') ? chat : `${chat}@s.whatsapp.net`, fromMe, id: `H${n}` },
    message: { conversation: `history ${n}` },
    messageTimestamp: Math.floor(at / 1000),
  }) as WAMessage;
}

const set = (messages: WAMessage[], progress: number, syncType = RECENT) => ({
  chats: [],
  contacts: [],
  messages,
  syncType,
  progress,
});

describe('a history message', () => {
  it('reads both directions of a one-to-one chat and of a group', () => {
    expect(historyMessageOf(message(0))).toEqual({
      id: 'H0',
      fromMe: false,
      chat: '4917600000082',
      from: '4917600000082',
      content: { type: 'chat', text: 'history 0' },
      at: new Date(Math.floor((NOW - 1000) / 1000) * 1000),
    });
    expect(historyMessageOf(message(1))).toMatchObject({ id: 'H1', fromMe: true, chat: '4917600000082' });
    const group = historyMessageOf(message(3, { chat: '120363000000000001@g.us' }));
    expect(group).toMatchObject({ fromMe: true, chat: '120363000000000001@g.us' });
  });

  it('leaves out status updates, messages without content and media download references', () => {
    expect(historyMessageOf(message(0, { chat: 'status@broadcast' }))).toBeNull();
    const empty = proto.WebMessageInfo.fromObject({
      key: { remoteJid: '4917600000082@s.whatsapp.net', fromMe: false, id: 'E' },
      messageTimestamp: 1_760_000_000,
    }) as WAMessage;
    expect(historyMessageOf(empty)).toBeNull();
    const image = proto.WebMessageInfo.fromObject({
      key: { remoteJid: '4917600000082@s.whatsapp.net', fromMe: false, id: 'I' },
      message: {
        imageMessage: {
          mimetype: 'image/jpeg',
          caption: 'a photo',
          url: 'https://mmg.whatsapp.net/x',
          directPath: '/x',
          mediaKey: Buffer.alloc(32, 1),
          fileSha256: Buffer.alloc(32, 2),
          fileEncSha256: Buffer.alloc(32, 3),
          fileLength: 10,
        },
      },
      messageTimestamp: 1_760_000_000,
    }) as WAMessage;
    expect(historyMessageOf(image)?.content).toEqual({ type: 'image', mimetype: 'image/jpeg', caption: 'a photo' });
  });
});

describe('the intake', () => {
  let events: NetworkEvent[];
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setImmediate'] });
    events = [];
  });
  afterEach(() => vi.useRealTimers());

  const batches = () => events.filter((e) => e.type === 'history_messages');
  const take = (i: number) => {
    const batch = batches()[i];
    if (batch?.type !== 'history_messages') throw new Error(`no batch ${i}`);
    batch.taken();
  };

  it('keeps what was sent within the days limit, the boundary in', () => {
    const intake = new HistoryIntake(
      7,
      (e) => events.push(e),
      () => NOW,
    );
    intake.onSet(set([message(0, { at: NOW - 7 * DAY }), message(1, { at: NOW - 7 * DAY - 1000 })], 10));
    expect(batches()).toHaveLength(1);
    expect((batches()[0] as { messages: readonly unknown[] }).messages).toHaveLength(1);
  });

  it('hands over batches of 500, the next only once the last was taken, and ends once, after them', async () => {
    const intake = new HistoryIntake(
      7,
      (e) => events.push(e),
      () => NOW,
    );
    intake.onSet(
      set(
        Array.from({ length: 800 }, (_, n) => message(n)),
        50,
      ),
    );
    intake.onSet(
      set(
        Array.from({ length: 400 }, (_, n) => message(800 + n)),
        100,
      ),
    );
    expect(batches()).toHaveLength(1);
    expect(intake.held).toBe(700);
    await vi.advanceTimersByTimeAsync(SETTLE_MS * 2);
    // Nothing more while the first batch is not taken; not the end either.
    expect(events).toHaveLength(1);
    take(0);
    await vi.advanceTimersByTimeAsync(0);
    expect(batches()).toHaveLength(2);
    take(0);
    await vi.advanceTimersByTimeAsync(0);
    expect(batches()).toHaveLength(2);
    take(1);
    await vi.advanceTimersByTimeAsync(0);
    expect(batches().map((b) => (b as { messages: readonly unknown[] }).messages.length)).toEqual([500, 500, 200]);
    expect(events.some((e) => e.type === 'history_synced')).toBe(false);
    take(2);
    await vi.advanceTimersByTimeAsync(0);
    expect(events.filter((e) => e.type === 'history_synced')).toHaveLength(1);
    expect(events.at(-1)).toEqual({ type: 'history_synced' });
    intake.onSet(set([message(5000)], 100));
    await vi.advanceTimersByTimeAsync(SETTLE_MS * 2);
    expect(events.filter((e) => e.type === 'history_synced')).toHaveLength(1);
    expect(batches()).toHaveLength(3);
  });

  it('waits SETTLE_MS after the final chunk for a chunk handed over late', async () => {
    const intake = new HistoryIntake(
      7,
      (e) => events.push(e),
      () => NOW,
    );
    intake.onSet(set([message(0)], 100));
    take(0);
    await vi.advanceTimersByTimeAsync(SETTLE_MS - 1);
    expect(events.some((e) => e.type === 'history_synced')).toBe(false);
    intake.onSet(set([message(1)], 40));
    await vi.advanceTimersByTimeAsync(0);
    take(1);
    await vi.advanceTimersByTimeAsync(SETTLE_MS - 1);
    expect(events.some((e) => e.type === 'history_synced')).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(events.filter((e) => e.type === 'history_synced')).toHaveLength(1);
  });

  it('ends when the library says the recent sync paused', async () => {
    const intake = new HistoryIntake(
      7,
      (e) => events.push(e),
      () => NOW,
    );
    intake.onSet(set([message(0)], 30));
    take(0);
    intake.onStatus({ syncType: RECENT, status: 'paused', explicit: false });
    await vi.advanceTimersByTimeAsync(SETTLE_MS);
    expect(events.filter((e) => e.type === 'history_synced')).toHaveLength(1);
  });

  it('takes nothing and tells nothing with 0 days, nor from a full or on-demand sync', async () => {
    const none = new HistoryIntake(
      0,
      (e) => events.push(e),
      () => NOW,
    );
    none.onSet(set([message(0)], 100));
    none.onStatus({ syncType: RECENT, status: 'paused', explicit: false });
    const full = new HistoryIntake(
      7,
      (e) => events.push(e),
      () => NOW,
    );
    full.onSet(set([message(0)], 100, proto.HistorySync.HistorySyncType.FULL));
    full.onSet(set([message(1)], 100, proto.HistorySync.HistorySyncType.ON_DEMAND));
    await vi.advanceTimersByTimeAsync(SETTLE_MS * 2);
    expect(events).toEqual([]);
  });
});
