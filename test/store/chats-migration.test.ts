// Migration 013a (src/chats/): messages stored before it get their chat (a group's JID from their params, else the
// other person), and the chats table is filled from them: each chat's last message (the greatest created_at, then
// id), its unread received messages; action rows are in no chat.
import { describe, expect, it } from 'vitest';
import { up } from '../../src/store/migrations/013a-chats.js';
import { noStoreAvailable } from '../helpers/gateway.js';
import { migrationStores } from '../helpers/migration-store.js';

describe.skipIf(noStoreAvailable)('migration 013a-chats', () => {
  const stores = migrationStores();

  it('gives stored messages their chat and fills the chats from them', async () => {
    const { db, dialect } = await stores.open();
    // The columns of `messages` the migration reads, as the earlier migrations left them.
    await db.schema
      .createTable('messages')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('account_id', 'bigint')
      .addColumn('device_id', 'bigint')
      .addColumn('direction', 'text')
      .addColumn('device_phone', 'text')
      .addColumn('receiver', 'text')
      .addColumn('sender', 'text')
      .addColumn('params', 'text')
      .addColumn('created_at', 'bigint')
      .addColumn('read_at', 'bigint')
      .execute();
    const GROUP = '120363000000000001@g.us';
    const row = (id: string, direction: string, at: number, over: Record<string, unknown> = {}) => ({
      id,
      account_id: 1,
      device_id: 7,
      direction,
      device_phone: '6281000000001',
      receiver: direction === 'outgoing' ? '6282000000001' : '6281000000001',
      sender: direction === 'incoming' ? '6282000000001' : null,
      params: '{}',
      created_at: at,
      read_at: null,
      ...over,
    });
    await db
      .insertInto('messages')
      .values([
        row('01A', 'outgoing', 100),
        row('01B', 'incoming', 200),
        row('01C', 'incoming', 200, { read_at: 250 }),
        row('01D', 'incoming', 150, { sender: '6282000000009', params: JSON.stringify({ group_id: GROUP }) }),
        row('01E', 'outgoing', 120, { receiver: GROUP }),
        row('01F', 'action', 900, { receiver: '6282000000001', params: JSON.stringify({ message_id: '01B' }) }),
      ])
      .execute();

    await up(db, dialect);

    const chats = await db.selectFrom('messages').select(['id', 'chat']).orderBy('id').execute();
    expect(chats).toEqual([
      { id: '01A', chat: '6282000000001' },
      { id: '01B', chat: '6282000000001' },
      { id: '01C', chat: '6282000000001' },
      { id: '01D', chat: GROUP },
      { id: '01E', chat: GROUP },
      { id: '01F', chat: null },
    ]);
    const rows = await db
      .selectFrom('chats')
      .select(['device_id', 'chat', 'type', 'last_message_id', 'last_message_at', 'unread_count', 'archived'])
      .orderBy('chat')
      .execute();
    expect(
      rows.map((r) => ({
        ...r,
        device_id: Number(r.device_id),
        last_message_at: Number(r.last_message_at),
        unread_count: Number(r.unread_count),
      })),
    ).toEqual([
      {
        device_id: 7,
        chat: GROUP,
        type: 'group',
        last_message_id: '01D',
        last_message_at: 150,
        unread_count: 1,
        archived: 0,
      },
      {
        device_id: 7,
        chat: '6282000000001',
        type: 'user',
        last_message_id: '01C',
        last_message_at: 200,
        unread_count: 1,
        archived: 0,
      },
    ]);
  });
});
