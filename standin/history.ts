/**
 * The history sync a phone sends a device it just linked, as WhatsApp sends it: one INITIAL_BOOTSTRAP chunk,
 * carrying the phone's push name and the LID/phone-number mappings it knows, then, when a test gave the phone a
 * history (`POST /control/phones/{phone}/history {messages, chats, old?}`), RECENT chunks of its conversations with
 * `progress` rising to 100 on the last. Every chunk travels inline (deflated in the notification itself).
 *
 * Owns: building those HistorySyncs and sending them, from the phone to its own new device, once per link. The
 * history is made up as it is sent, chunk by chunk (never held whole): message i is in chat i mod `chats` (numbers
 * 1999xxxxxxx), every second one written by the phone's own number, sent i+1 seconds ago; `old` more messages were
 * sent 30 days ago and more (beyond any usual days limit).
 * Must never: send history to a device of another account (the library drops it as spoofed, and so would
 * WhatsApp).
 */
import { deflateSync } from 'node:zlib';
import { proto } from 'baileys';
import { phoneSendsTo, messageId, type RoutingContext } from './routing.js';
import type { Companion } from './world.js';

/** A phone's history, as a test gave it. */
export interface HistorySpec {
  readonly messages: number;
  readonly chats: number;
  readonly old: number;
}

/** How many other numbers' mappings one sync carries at most. */
const MAX_MAPPINGS = 500;
/** Messages in one RECENT chunk. */
const CHUNK = 1_000;
/** Bounds of a test's history. */
export const HISTORY_LIMITS = { messages: 200_000, chats: 10_000, old: 10_000 } as const;

const DAY_MS = 86_400_000;

/** The chat of history message `i`: a number of its own. */
export const historyChat = (i: number, chats: number): string => `1999${String(i % chats).padStart(7, '0')}`;

export async function sendInitialHistory(ctx: RoutingContext, companion: Companion): Promise<void> {
  const account = companion.account;
  const mappings: proto.IPhoneNumberToLIDMapping[] = [];
  for (const other of ctx.world.accounts.values()) {
    if (mappings.length >= MAX_MAPPINGS) break;
    mappings.push({ pnJid: `${other.phone}@s.whatsapp.net`, lidJid: `${other.lid}@lid` });
  }
  await sendChunk(ctx, companion, {
    syncType: proto.HistorySync.HistorySyncType.INITIAL_BOOTSTRAP,
    conversations: [],
    pushnames: [{ id: `${account.phone}@s.whatsapp.net`, pushname: `Phone ${account.phone}` }],
    phoneNumberToLidMappings: mappings,
    progress: 100,
    chunkOrder: 0,
  });
  const spec = account.history;
  if (spec === undefined) return;
  const total = spec.messages + spec.old;
  const chunks = Math.max(1, Math.ceil(total / CHUNK));
  const now = Date.now();
  for (let c = 0; c < chunks; c++) {
    const byChat = new Map<string, proto.IHistorySyncMsg[]>();
    for (let i = c * CHUNK; i < Math.min(total, (c + 1) * CHUNK); i++) {
      const old = i >= spec.messages;
      const n = old ? i - spec.messages : i;
      const chat = `${historyChat(n, spec.chats)}@s.whatsapp.net`;
      const at = old ? now - 30 * DAY_MS - (n + 1) * 1000 : now - (n + 1) * 1000;
      const message: proto.IWebMessageInfo = {
        key: { remoteJid: chat, fromMe: n % 2 === 1, id: `${old ? 'OLD' : 'HIST'}${String(n).padStart(12, '0')}` },
        message: { conversation: `${old ? 'old' : 'history'} ${n}` },
        messageTimestamp: Math.floor(at / 1000),
      };
      const list = byChat.get(chat) ?? [];
      list.push({ message, msgOrderId: i });
      byChat.set(chat, list);
    }
    await sendChunk(ctx, companion, {
      syncType: proto.HistorySync.HistorySyncType.RECENT,
      conversations: [...byChat].map(([id, messages]) => ({ id, messages })),
      progress: c === chunks - 1 ? 100 : Math.floor(((c + 1) * 100) / chunks),
      chunkOrder: c + 1,
    });
  }
}

/** One chunk, as a history-sync notification from the account's own phone. */
async function sendChunk(ctx: RoutingContext, companion: Companion, sync: proto.IHistorySync): Promise<void> {
  const account = companion.account;
  const payload = deflateSync(proto.HistorySync.encode(sync).finish());
  await phoneSendsTo(
    ctx,
    account,
    { kind: 'companion', companion },
    messageId(),
    {
      protocolMessage: {
        type: proto.Message.ProtocolMessage.Type.HISTORY_SYNC_NOTIFICATION,
        historySyncNotification: {
          syncType: sync.syncType ?? null,
          chunkOrder: sync.chunkOrder ?? null,
          progress: sync.progress ?? null,
          initialHistBootstrapInlinePayload: payload,
        },
      },
    },
    // From the account's own phone: the library only takes history from its own account.
    {
      from: account.primary.lidJid,
      sender_pn: account.primary.pnJid,
      addressing_mode: 'lid',
      category: 'peer',
      type: 'text',
    },
  );
}
