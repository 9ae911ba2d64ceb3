/**
 * SQL of the chat routes (DECISIONS 16): a page of a device's chats, one chat, a page of one chat's messages, the
 * newest unread message of a chat, and the archive, pin and mute state the gateway set.
 *
 * Owns: the keyset orders (chats by `(last_message_at, chat)`, a chat's messages by `(created_at, id)`, both newest
 * first, each read through its index from the cursor on, the cursor a row-value comparison), the list's page read with
 * its last messages in one statement, and the upsert of a chat's settings.
 * Must never: write the message-derived columns of `chats` (maintain.ts does, with the message writes), or read a
 * device's messages beyond the page asked for.
 */
import { sql, type Selectable } from 'kysely';
import type { MessageRow } from '../messages/repository.js';
import type { ChatsTable, Db } from '../store/schema.js';
import { isGroupChat } from './chat-key.js';

export type ChatRow = Selectable<ChatsTable>;

/** A chat with nothing in it yet and no settings: what a chat is before its first message or mark. */
export function emptyChat(accountId: number, deviceId: number, chat: string): ChatRow {
  return {
    device_id: deviceId,
    chat,
    account_id: accountId,
    type: isGroupChat(chat) ? 'group' : 'user',
    name: null,
    last_message_id: null,
    last_message_at: 0,
    unread_count: 0,
    archived: 0,
    pinned: 0,
    muted_until: null,
    updated_at: 0,
  };
}

/** Where a page of chats goes on: after this chat in the list's order. */
export interface ChatsAfter {
  readonly at: number;
  readonly chat: string;
}

/** Where a page of a chat's messages goes on: after this message in the history's order. */
export interface MessagesAfter {
  readonly at: number;
  readonly id: string;
}

export interface ChatSettings {
  readonly archived?: boolean;
  readonly pinned?: boolean;
  readonly mutedUntil?: number | null;
}

/** A chat of a page with its last message, and whether that message has reactions or incoming media to read. */
export interface ChatWithLast {
  readonly chat: ChatRow;
  readonly last: MessageRow | null;
  readonly hasReactions: boolean;
  readonly hasMedia: boolean;
}

const CHAT_COLUMNS = [
  'device_id',
  'chat',
  'account_id',
  'type',
  'name',
  'last_message_id',
  'last_message_at',
  'unread_count',
  'archived',
  'pinned',
  'muted_until',
  'updated_at',
] as const;
const chatColumns = sql.raw(CHAT_COLUMNS.map((c) => `page.${c} as c_${c}`).join(', '));

/** A row of `pageWithLast` split in two: the chat's columns (`c_…`) and its last message's (the rest). */
function splitRow(row: Record<string, unknown>): ChatWithLast {
  const chat: Record<string, unknown> = {};
  const message: Record<string, unknown> = {};
  for (const key in row) {
    if (key.startsWith('c_')) chat[key.slice(2)] = row[key];
    else if (key !== 'has_reactions' && key !== 'has_media') message[key] = row[key];
  }
  return {
    chat: chat as ChatRow,
    last: message.id === null || message.id === undefined ? null : (message as MessageRow),
    hasReactions: row.has_reactions === true || Number(row.has_reactions) === 1,
    hasMedia: row.has_media === true || Number(row.has_media) === 1,
  };
}

export const chatsRepository = {
  /**
   * A page of the device's chats, each with its last message read by primary key, in one statement: the page is a
   * range of `chats_recent` starting at the cursor (a row-value comparison: an OR of the two columns would read and
   * filter every chat before it), and the messages, reactions and media are read only for the page's rows.
   */
  pageWithLast: async (
    db: Db,
    deviceId: number,
    after: ChatsAfter | undefined,
    limit: number,
  ): Promise<ChatWithLast[]> => {
    const from =
      after === undefined
        ? sql`device_id = ${deviceId}`
        : sql`device_id = ${deviceId} and (last_message_at, chat) < (${after.at}, ${after.chat})`;
    const { rows } = await sql<Record<string, unknown>>`
      with page as (
        select * from chats where ${from} order by last_message_at desc, chat desc limit ${limit}
      )
      select ${chatColumns}, m.*,
        exists (select 1 from message_reactions r where r.message_id = m.id) as has_reactions,
        exists (select 1 from incoming_media i where i.message_id = m.id) as has_media
      from page left join messages m on m.id = page.last_message_id and m.direction <> 'action'
      order by page.last_message_at desc, page.chat desc`.execute(db);
    return rows.map(splitRow);
  },

  find: (db: Db, deviceId: number, chat: string): Promise<ChatRow | undefined> =>
    db.selectFrom('chats').selectAll().where('device_id', '=', deviceId).where('chat', '=', chat).executeTakeFirst(),

  messages: (db: Db, deviceId: number, chat: string, after: MessagesAfter | undefined, limit: number) => {
    let query = db.selectFrom('messages').selectAll().where('device_id', '=', deviceId).where('chat', '=', chat);
    if (after !== undefined) {
      // A row-value comparison: the index range starts at the cursor (an OR of the two would filter from the top).
      query = query.where((eb) => eb(eb.refTuple('created_at', 'id'), '<', eb.tuple(after.at, after.id)));
    }
    return query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).execute() as Promise<MessageRow[]>;
  },

  /** The newest received message of the chat not yet read (a read of it marks the ones before it too). */
  newestUnread: (db: Db, deviceId: number, chat: string): Promise<{ id: string } | undefined> =>
    db
      .selectFrom('messages')
      .select('id')
      .where('device_id', '=', deviceId)
      .where('chat', '=', chat)
      .where('direction', '=', 'incoming')
      .where('read_at', 'is', null)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(1)
      .executeTakeFirst(),

  /** The chat's archive, pin and mute state as the network now has it; the chat is added if the gateway had none. */
  saveSettings: async (
    db: Db,
    accountId: number,
    deviceId: number,
    chat: string,
    settings: ChatSettings,
    now: number,
  ): Promise<void> => {
    const set = {
      ...(settings.archived === undefined ? {} : { archived: settings.archived ? 1 : 0 }),
      ...(settings.pinned === undefined ? {} : { pinned: settings.pinned ? 1 : 0 }),
      ...(settings.mutedUntil === undefined ? {} : { muted_until: settings.mutedUntil }),
      updated_at: now,
    };
    await db
      .insertInto('chats')
      .values({
        ...emptyChat(accountId, deviceId, chat),
        ...set,
      })
      .onConflict((oc) => oc.columns(['device_id', 'chat']).doUpdateSet(set))
      .execute();
  },

  /** The subjects of the device's groups among `chats` (a group chat's name). */
  groupNames: async (db: Db, deviceId: number, chats: readonly string[]): Promise<Map<string, string>> => {
    const groups = chats.filter(isGroupChat);
    if (groups.length === 0) return new Map();
    const rows = await db
      .selectFrom('groups')
      .select(['network_id', 'subject'])
      .where('device_id', '=', deviceId)
      .where('network_id', 'in', groups)
      .execute();
    return new Map(rows.map((row) => [row.network_id, row.subject]));
  },
};
