/**
 * Keeping the chat list (DECISIONS 16; docs/internals.md, Chats): every writer of messages calls in here in the
 * transaction that writes them, so a chat's last message and unread count always agree with the messages table,
 * and `GET /chats` never scans messages.
 *
 * Owns: the `chats` rows' message-derived columns: the last message (the greatest `(created_at, id)`, so writers
 * committing out of order, or history written late with its own times, still leave the newest one), and the unread
 * count (received messages with no `read_at`). A batch of messages costs one multi-row upsert, its rows in one order
 * (device, chat) so concurrent writers never wait on each other in a circle; PostgreSQL takes one row once per
 * statement, so a batch is folded per chat first.
 * Must never: scan a device's messages (only the chats a write touched are read again, by index), or touch the
 * archive, pin and mute state (the chat service's, from the network).
 */
import { sql } from 'kysely';
import type { Db } from '../store/schema.js';
import { chatKey, isGroupChat, type ChatKeyFields } from './chat-key.js';

/** What a message writer hands over of each message it wrote. */
export interface ChatMessage extends ChatKeyFields {
  readonly id: string;
  readonly account_id: number;
  readonly device_id: number;
  readonly created_at: number;
  readonly read_at: number | null;
  /** The row's `chat` when the writer has it already; else it is worked out (chat-key.ts). */
  readonly chat?: string | null;
}

interface Fold {
  device_id: number;
  chat: string;
  account_id: number;
  type: string;
  name: null;
  last_message_id: string;
  last_message_at: number;
  unread_count: number;
  archived: number;
  pinned: number;
  muted_until: null;
  updated_at: number;
}

/** Rows per statement: 12 bound values each, well under SQLite's and PostgreSQL's limits. */
const ROWS_PER_STATEMENT = 500;

const newer = (at: number, id: string, than: { last_message_at: number; last_message_id: string }) =>
  at > than.last_message_at || (at === than.last_message_at && id > than.last_message_id);

/**
 * Messages just written (in `db`'s transaction): their chats get them as last message where they are newer, and
 * one more unread for each received one not read. Action rows and anything in no chat are passed over.
 */
export async function touchChats(db: Db, messages: ReadonlyArray<ChatMessage>, now: number): Promise<void> {
  const folds = new Map<string, Fold>();
  for (const message of messages) {
    const chat = message.chat ?? chatKey(message);
    if (chat === null || chat === '') continue;
    const key = `${message.device_id}\u0000${chat}`;
    const unread = message.direction === 'incoming' && message.read_at === null ? 1 : 0;
    const fold = folds.get(key);
    if (fold === undefined) {
      folds.set(key, {
        device_id: message.device_id,
        chat,
        account_id: message.account_id,
        type: isGroupChat(chat) ? 'group' : 'user',
        name: null,
        last_message_id: message.id,
        last_message_at: message.created_at,
        unread_count: unread,
        archived: 0,
        pinned: 0,
        muted_until: null,
        updated_at: now,
      });
      continue;
    }
    fold.unread_count += unread;
    if (newer(message.created_at, message.id, fold)) {
      fold.last_message_id = message.id;
      fold.last_message_at = message.created_at;
    }
  }
  if (folds.size === 0) return;
  const rows = [...folds.values()].sort((a, b) =>
    a.device_id !== b.device_id ? a.device_id - b.device_id : a.chat < b.chat ? -1 : a.chat > b.chat ? 1 : 0,
  );
  for (let start = 0; start < rows.length; start += ROWS_PER_STATEMENT) {
    await upsert(db, rows.slice(start, start + ROWS_PER_STATEMENT));
  }
}

const NEWER = sql<boolean>`(excluded.last_message_at > chats.last_message_at or (excluded.last_message_at = chats.last_message_at and excluded.last_message_id > coalesce(chats.last_message_id, '')))`;

async function upsert(db: Db, rows: Fold[]): Promise<void> {
  await db
    .insertInto('chats')
    .values(rows)
    .onConflict((oc) =>
      oc.columns(['device_id', 'chat']).doUpdateSet({
        last_message_id: sql<string>`case when ${NEWER} then excluded.last_message_id else chats.last_message_id end`,
        last_message_at: sql<number>`case when ${NEWER} then excluded.last_message_at else chats.last_message_at end`,
        unread_count: sql<number>`chats.unread_count + excluded.unread_count`,
        updated_at: sql<number>`excluded.updated_at`,
      }),
    )
    .execute();
}

/** `count` received messages of the chat were just marked read (in `db`'s transaction). */
export async function chatRead(db: Db, deviceId: number, chat: string, count: number, now: number): Promise<void> {
  if (count === 0) return;
  await db
    .updateTable('chats')
    .set({ unread_count: sql<number>`unread_count - ${count}`, updated_at: now })
    .where('device_id', '=', deviceId)
    .where('chat', '=', chat)
    .execute();
}

/** What a deleting writer hands over of each message it deleted. */
export interface GoneMessage {
  readonly id: string;
  readonly device_id: number;
  readonly chat: string | null;
  readonly direction: string;
  readonly read_at: number | null;
}

/**
 * Messages just deleted (retention, in `db`'s transaction): unread ones leave their chat's count, and a chat whose
 * last message went gets its newest remaining one (one indexed read per such chat), or none.
 */
export async function forgetChatMessages(db: Db, gone: ReadonlyArray<GoneMessage>, now: number): Promise<void> {
  const unread = new Map<string, { deviceId: number; chat: string; count: number }>();
  const touched = new Map<string, { deviceId: number; chat: string }>();
  for (const row of gone) {
    if (row.chat === null) continue;
    const key = `${row.device_id}\u0000${row.chat}`;
    touched.set(key, { deviceId: row.device_id, chat: row.chat });
    if (row.direction !== 'incoming' || row.read_at !== null) continue;
    const entry = unread.get(key) ?? { deviceId: row.device_id, chat: row.chat, count: 0 };
    entry.count += 1;
    unread.set(key, entry);
  }
  for (const { deviceId, chat, count } of unread.values()) await chatRead(db, deviceId, chat, count, now);
  if (touched.size === 0) return;
  const ids = gone.map((row) => row.id);
  const stale = await db
    .selectFrom('chats')
    .select(['device_id', 'chat'])
    .where('last_message_id', 'in', ids)
    .execute();
  for (const { device_id: deviceId, chat } of stale) {
    const last = await db
      .selectFrom('messages')
      .select(['id', 'created_at'])
      .where('device_id', '=', deviceId)
      .where('chat', '=', chat)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(1)
      .executeTakeFirst();
    await db
      .updateTable('chats')
      .set({ last_message_id: last?.id ?? null, last_message_at: last?.created_at ?? 0, updated_at: now })
      .where('device_id', '=', deviceId)
      .where('chat', '=', chat)
      .execute();
  }
}
