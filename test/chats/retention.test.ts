// Retention keeps the chat list true (src/chats/maintain.ts, forgetChatMessages): deleting old messages takes their
// unread ones out of the chat's count, and a chat whose last message went gets its newest remaining one, or none.
import { ulid } from 'ulid';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { touchChats } from '../../src/chats/maintain.js';
import { messageRetentionRepository } from '../../src/messages/retention-repository.js';
import { messagesRepository, type NewMessageRow } from '../../src/messages/repository.js';
import { noStoreAvailable, startGateway, type TestGateway } from '../helpers/gateway.js';
import { deviceRow, messageRow } from '../helpers/rows.js';

const DAY = 24 * 60 * 60_000;

describe.skipIf(noStoreAvailable)('retention and the chat list', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway();
  });
  afterAll(() => gw?.close());

  it('takes deleted unread messages out of the count; a chat whose messages all went has no last message', async () => {
    const db = gw.app.store.db;
    const accountId = Number((await db.selectFrom('accounts').select('id').orderBy('id').executeTakeFirstOrThrow()).id);
    const { id: deviceId } = await db
      .insertInto('devices')
      .values(deviceRow(accountId, { phone: '6284300000001' }))
      .returning('id')
      .executeTakeFirstOrThrow();
    const now = Date.now();
    const old = now - 40 * DAY;
    const row = (at: number, over: Partial<NewMessageRow>) => {
      const base = messageRow(ulid(at), accountId, Number(deviceId), {
        created_at: at,
        status: 'delivered',
        device_phone: '6284300000001',
        ...over,
      });
      return base as NewMessageRow;
    };
    const rows = [
      // Kept chat: two old unread received, one recent one ours.
      row(old, { direction: 'incoming', sender: '6284300000002', receiver: '6284300000001' }),
      row(old + 1, { direction: 'incoming', sender: '6284300000002', receiver: '6284300000001' }),
      row(now - DAY, { receiver: '6284300000002' }),
      // Emptied chat: only an old message, and it is the last.
      row(old + 2, { direction: 'incoming', sender: '6284300000003', receiver: '6284300000001' }),
      // Untouched chat: one recent unread received message.
      row(now - 2 * DAY, { direction: 'incoming', sender: '6284300000004', receiver: '6284300000001' }),
    ];
    await db.transaction().execute(async (trx) => {
      await messagesRepository.insertMany(trx, rows);
      await touchChats(trx, rows as never, now);
    });
    const before = now - 30 * DAY;
    const idBelow = ulid(before).slice(0, 10) + '0'.repeat(16);
    const deleted = await db
      .transaction()
      .execute((trx) => messageRetentionRepository.deleteMessages(trx, before, idBelow, 100));
    expect(deleted).toBe(3);
    const chats = await db
      .selectFrom('chats')
      .select(['chat', 'last_message_id', 'last_message_at', 'unread_count'])
      .where('device_id', '=', deviceId)
      .orderBy('chat')
      .execute();
    expect(
      chats.map((c) => ({ ...c, last_message_at: Number(c.last_message_at), unread_count: Number(c.unread_count) })),
    ).toEqual([
      { chat: '6284300000002', last_message_id: rows[2]!.id, last_message_at: now - DAY, unread_count: 0 },
      { chat: '6284300000003', last_message_id: null, last_message_at: 0, unread_count: 0 },
      { chat: '6284300000004', last_message_id: rows[4]!.id, last_message_at: now - 2 * DAY, unread_count: 1 },
    ]);
  });
});
