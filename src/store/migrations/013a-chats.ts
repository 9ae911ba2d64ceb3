/**
 * Chats (issue 27, DECISIONS 16; docs/internals.md, Chats).
 *
 * - `messages.chat`: the chat a message is in, set when the row is written (src/chats/chat-key.ts): the group's
 *   network id for a group message, else the other person's number (the receiver of ours, the sender of one
 *   received); null for the queue rows of message actions. Indexed with the device and the message's time and id,
 *   so one chat's history is read newest first without a scan.
 * - `chats`: one row per (device, chat), written in the same transaction as every message write that changes it
 *   (src/chats/maintain.ts): the chat's last message (the greatest `(created_at, id)` of its messages), how many of
 *   its received messages are unread, and the archive, pin and mute state the gateway set on the network.
 *   `last_message_at` is 0 while the chat has no message (a chat archived before any message).
 *
 * Rows from before this migration are filled in here, once, from the messages stored.
 */
import { sql, type Kysely } from 'kysely';
import type { MigrationDialect } from './helpers.js';

export async function up(db: Kysely<unknown>, dialect: MigrationDialect): Promise<void> {
  const postgres = dialect.blobType === 'bytea';
  await db.schema.alterTable('messages').addColumn('chat', 'text').execute();
  const groupOf = postgres ? sql`(params::json ->> 'group_id')` : sql`json_extract(params, '$.group_id')`;
  await sql`
    update messages set chat = case
      when direction = 'outgoing' then receiver
      else coalesce(case when params like '%"group_id"%' then ${groupOf} end, sender, device_phone)
    end
    where direction in ('outgoing', 'incoming')`.execute(db);
  await db.schema
    .createIndex('messages_chat_history')
    .on('messages')
    .columns(['device_id', 'chat', 'created_at', 'id'])
    .execute();

  await db.schema
    .createTable('chats')
    .addColumn('device_id', 'bigint', (col) => col.notNull())
    .addColumn('chat', 'text', (col) => col.notNull())
    .addColumn('account_id', 'bigint', (col) => col.notNull())
    .addColumn('type', 'text', (col) => col.notNull())
    .addColumn('name', 'text')
    .addColumn('last_message_id', 'text')
    .addColumn('last_message_at', 'bigint', (col) => col.notNull().defaultTo(0))
    .addColumn('unread_count', 'integer', (col) => col.notNull().defaultTo(0))
    .addColumn('archived', 'integer', (col) => col.notNull().defaultTo(0))
    .addColumn('pinned', 'integer', (col) => col.notNull().defaultTo(0))
    .addColumn('muted_until', 'bigint')
    .addColumn('updated_at', 'bigint', (col) => col.notNull())
    .addPrimaryKeyConstraint('chats_pk', ['device_id', 'chat'])
    .execute();
  await db.schema.createIndex('chats_recent').on('chats').columns(['device_id', 'last_message_at', 'chat']).execute();

  await sql`
    insert into chats (device_id, chat, account_id, type, name, last_message_id, last_message_at, unread_count,
                       archived, pinned, muted_until, updated_at)
    select m.device_id, m.chat, max(m.account_id),
           case when m.chat like '%@g.us' then 'group' else 'user' end, null,
           (select l.id from messages l where l.device_id = m.device_id and l.chat = m.chat
             order by l.created_at desc, l.id desc limit 1),
           max(m.created_at),
           sum(case when m.direction = 'incoming' and m.read_at is null then 1 else 0 end),
           0, 0, null, max(m.created_at)
    from messages m
    where m.chat is not null
    group by m.device_id, m.chat`.execute(db);
}
