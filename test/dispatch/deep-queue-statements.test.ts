// The dispatcher's claim of a run and its `sent` change find the run's messages through an index, whatever
// PostgreSQL's statistics say about how many messages are `pending`. With no statistics (a table not analyzed since a
// burst was queued), a statement naming its messages by id and `status = 'pending'` was answered from the
// pending-only index: it read the whole queue for every run (44 ms per run of 100 with 100,000 queued). Here 5,000
// messages are queued, the table's statistics removed and autovacuum kept off it (this database is the test's own),
// and the rows each statement reads are counted by the server.
// PostgreSQL only: SQLite's statements name the run's ids alone.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { actionsRepository } from '../../src/messages/actions-repository.js';
import { messageStatusRepository } from '../../src/messages/status-repository.js';
import type { Db } from '../../src/store/schema.js';
import { noStoreAvailable, startGateway, storeKind, type TestGateway } from '../helpers/gateway.js';
import { outgoingRows, type OutgoingRows } from '../helpers/outgoing-rows.js';

const QUEUED = 5_000;
const RUN = 100;

describe.skipIf(noStoreAvailable || storeKind !== 'postgres')('a run of a deep queue, with no statistics', () => {
  let gw: TestGateway;
  let rows: OutgoingRows;

  beforeAll(async () => {
    gw = await startGateway();
    rows = await outgoingRows(gw, 'deep', '4915100000071', '4917600000072');
    const db = gw.app.store.db;
    await sql`insert into messages (id, account_id, device_id, direction, type, device_phone, receiver, sender,
        message, params, simulate_typing, status, attempts, next_attempt_at, created_at, chat)
      select 'deep-q-' || lpad(n::text, 6, '0'), ${rows.accountId}, ${rows.deviceId}, 'outgoing', 'chat',
        '4915100000071', '4917600000072', '4915100000071', 'hi', '{"text":"hi"}', 0, 'pending', 0, 1, 1,
        '4917600000072'
      from generate_series(1, ${QUEUED}) as n`.execute(db);
    await sql`alter table messages set (autovacuum_enabled = false)`.execute(db);
    await sql`delete from pg_statistic where starelid = 'messages'::regclass`.execute(db);
  });
  afterAll(() => gw?.close());

  /** A run of the queue: `RUN` pending messages from the `from`-th, by id and place. */
  async function run(from: number) {
    return gw.app.store.db
      .selectFrom('messages')
      .select(['id', 'seq'])
      .where('device_id', '=', rows.deviceId)
      .where('status', '=', 'pending')
      .orderBy('seq')
      .offset(from)
      .limit(RUN)
      .execute();
  }

  /**
   * The rows of messages `write` read: scanned, fetched by a bitmap scan, and fetched through each index. Counted by
   * the server in this connection's counts not yet reported (`pg_stat_get_xact_*`, which may still hold earlier
   * transactions' counts on PostgreSQL 15), before and after, in one transaction.
   */
  async function readBy(write: (trx: Db) => Promise<unknown>): Promise<number> {
    const counted = async (trx: Db) => {
      const { rows: read } = await sql<{ n: number }>`
        select pg_stat_get_xact_tuples_returned(t.oid) + pg_stat_get_xact_tuples_fetched(t.oid)
          + (select coalesce(sum(pg_stat_get_xact_tuples_fetched(indexrelid)), 0) from pg_index where indrelid = t.oid)
          as n
        from pg_class t where t.oid = 'messages'::regclass`.execute(trx);
      return Number(read[0]!.n);
    };
    return gw.app.store.db.transaction().execute(async (trx) => {
      const before = await counted(trx);
      await write(trx);
      return (await counted(trx)) - before;
    });
  }

  it('the claim reads about the run, not the queue', async () => {
    const messages = await run(0);
    let claimed = new Set<string>();
    const read = await readBy(async (trx) => {
      claimed = await actionsRepository.claimMany(trx, rows.deviceId, messages, 1);
    });
    expect(claimed.size).toBe(RUN);
    expect(read).toBeGreaterThanOrEqual(RUN);
    expect(read).toBeLessThan(3 * RUN);
  });

  it('the `sent` change reads about the run, not the queue, with and without reading the rows back', async () => {
    for (const [from, readBack] of [
      [RUN, false],
      [2 * RUN, true],
    ] as const) {
      const changes = (await run(from)).map(({ id, seq }) => ({ id, seq, deviceId: rows.deviceId, at: 2 }));
      const read = await readBy((trx) =>
        readBack
          ? messageStatusRepository.changeManyReadBack(trx, 'sent', changes)
          : messageStatusRepository.changeMany(trx, 'sent', changes),
      );
      expect(read).toBeGreaterThanOrEqual(RUN);
      expect(read).toBeLessThan(3 * RUN);
      const sent = await gw.app.store.db
        .selectFrom('messages')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where(
          'id',
          'in',
          changes.map((c) => c.id),
        )
        .where('status', '=', 'sent')
        .executeTakeFirstOrThrow();
      expect(Number(sent.n)).toBe(RUN);
    }
  });
});
