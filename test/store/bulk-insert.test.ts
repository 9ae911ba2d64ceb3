// src/store/bulk-insert.ts through messagesRepository.insertMany, on the real
// store: statements compiled once and split by powers of two must store every
// row, every column under its own name, for any count, on both dialects.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { messagesRepository, type MessageRow } from '../../src/messages/repository.js';
import { BulkInsert } from '../../src/store/bulk-insert.js';
import { noStoreAvailable, startGateway, type TestGateway } from '../helpers/gateway.js';

describe.skipIf(noStoreAvailable)('bulk insert of messages', () => {
  let gw: TestGateway;
  let deviceId: number;
  let serial = 0;

  beforeAll(async () => {
    gw = await startGateway();
    const created = await gw.request('POST', '/devices', { package: 'BETA', name: 'bulk', phone: '6281999990501' });
    deviceId = created.body.data.id;
  });
  afterAll(() => gw?.close());

  /** A row whose every column holds a value that names its row, so a shifted column cannot go unnoticed. */
  function row(n: number): Omit<MessageRow, 'seq'> {
    const i = ++serial;
    return {
      id: `01BULK${String(n).padStart(4, '0')}${String(i).padStart(10, '0')}`,
      account_id: 1,
      device_id: deviceId,
      direction: i % 2 === 0 ? 'outgoing' : 'incoming',
      type: `type-${i}`,
      device_phone: `62811${i}`,
      receiver: `62812${i}`,
      sender: i % 3 === 0 ? null : `62813${i}`,
      message: `text ${i} with 'quotes', "double" and ; semicolons`,
      file_url: i % 2 === 0 ? null : `https://example.test/${i}.png`,
      params: JSON.stringify({ text: `t${i}`, nested: { i } }),
      chat: `chat-${i}`,
      simulate_typing: i % 2,
      status: i % 2 === 0 ? 'pending' : 'sent',
      failed_reason: i % 5 === 0 ? `reason ${i}` : null,
      attempts: i % 7,
      next_attempt_at: 1_000_000 + i,
      created_at: 2_000_000 + i,
      sent_at: i % 2 === 0 ? null : 3_000_000 + i,
      delivered_at: i % 4 === 0 ? 4_000_000 + i : null,
      read_at: i % 8 === 0 ? 5_000_000 + i : null,
      failed_at: i % 5 === 0 ? 6_000_000 + i : null,
      rendered_as: i % 3 === 0 ? 'text' : null,
      quoted: i % 3 === 0 ? null : JSON.stringify({ id: `q${i}`, fromMe: true, chat: `62814${i}` }),
      edited_at: i % 6 === 0 ? 7_000_000 + i : null,
      deleted_at: i % 4 === 1 ? 8_000_000 + i : null,
      claimed_at: i % 5 === 1 ? 9_000_000 + i : null,
    };
  }

  it.each([1, 2, 3, 50, 255, 256, 257, 300, 513])('stores %i rows exactly as given', async (count) => {
    const rows = Array.from({ length: count }, () => row(count));
    await messagesRepository.insertMany(gw.app.store.db, rows);
    const stored = await gw.app.store.db
      .selectFrom('messages')
      .selectAll()
      .where(
        'id',
        'in',
        rows.map((r) => r.id),
      )
      .orderBy('seq')
      .execute();
    expect(stored.map(({ seq: _seq, ...rest }) => ({ ...rest }))).toEqual(rows);
  });

  it('stores nothing and runs nothing for no rows', async () => {
    const before = await gw.app.store.db
      .selectFrom('messages')
      .select((eb) => eb.fn.countAll().as('n'))
      .executeTakeFirst();
    await messagesRepository.insertMany(gw.app.store.db, []);
    const after = await gw.app.store.db
      .selectFrom('messages')
      .select((eb) => eb.fn.countAll().as('n'))
      .executeTakeFirst();
    expect(Number(after?.n)).toBe(Number(before?.n));
  });

  it('inside a transaction, rolls back with it', async () => {
    const rows = [row(0), row(0), row(0)];
    await expect(
      gw.app.store.db.transaction().execute(async (trx) => {
        await messagesRepository.insertMany(trx, rows);
        throw new Error('abort');
      }),
    ).rejects.toThrow('abort');
    const stored = await gw.app.store.db
      .selectFrom('messages')
      .select('id')
      .where(
        'id',
        'in',
        rows.map((r) => r.id),
      )
      .execute();
    expect(stored).toEqual([]);
  });

  it('fails, storing nothing, when a listed column is not the table’s', async () => {
    const broken = new BulkInsert<'messages', { id: string; nope: string }>('messages', ['id', 'nope']);
    await expect(broken.run(gw.app.store.db, [{ id: 'x', nope: 'y' }])).rejects.toThrow();
    const stored = await gw.app.store.db.selectFrom('messages').select('id').where('id', '=', 'x').execute();
    expect(stored).toEqual([]);
  });
});
