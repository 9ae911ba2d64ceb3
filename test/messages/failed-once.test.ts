// Issue 24, item 9: `message.failed` is recorded once per message: the failure transition happens once in
// the store, whichever paths race for it. A send that fails (the dispatcher's pending → failed) and the end of
// the device's queue (logout or deletion fails every pending message) meet on the row: on PostgreSQL the queue
// end waits for the send's row lock and must then see the message is no longer pending. (SQLite serialises
// writers, so the race cannot happen there.)
import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { endQueueBatch } from '../../src/messages/end-queue.js';
import { messagesRepository } from '../../src/messages/repository.js';
import { messageStatusRepository } from '../../src/messages/status-repository.js';
import { openStore, type Store } from '../../src/store/store.js';
import { waitFor } from '../helpers/wait.js';
import { noStoreAvailable, storeKind, startGateway, type TestGateway } from '../helpers/gateway.js';

describe.skipIf(noStoreAvailable || storeKind !== 'postgres')('a message fails once', () => {
  let gw: TestGateway;
  let store: Store;
  let deviceId: number;

  beforeEach(async () => {
    gw = await startGateway();
    store = openStore({ databaseUrl: gw.location.databaseUrl, dataDir: gw.location.dataDir });
    const created = await gw.request('POST', '/devices', { package: 'BUSINESS', name: 'fails once' });
    deviceId = created.body.data.id;
  });
  afterEach(async () => {
    await store.close();
    await gw.close();
  });

  async function pendingMessage(id: string): Promise<void> {
    const device = await store.db
      .selectFrom('devices')
      .selectAll()
      .where('id', '=', deviceId)
      .executeTakeFirstOrThrow();
    const now = Date.now();
    await messagesRepository.insert(store.db, {
      id,
      account_id: device.account_id,
      device_id: deviceId,
      direction: 'outgoing',
      type: 'chat',
      message: 'hi',
      params: JSON.stringify({ text: 'hi' }),
      device_phone: '4915100000091',
      receiver: '4917600000092',
      sender: '4915100000091',
      file_url: null,
      simulate_typing: 0,
      status: 'pending',
      failed_reason: null,
      attempts: 0,
      next_attempt_at: now,
      created_at: now,
      sent_at: null,
      delivered_at: null,
      read_at: null,
      failed_at: null,
      rendered_as: null,
    });
  }

  it('the queue end does not fail again a message a send failed while it waited for the row', async () => {
    const id = '01JQZ3Y8N5S7T9V1W3X5Y7Z9B1';
    await pendingMessage(id);
    const end = {
      device: { id: deviceId, phone: '4915100000091', account_id: 0 } as never,
      reason: 'device logged out',
      announce: false,
    };
    let releaseSend!: () => void;
    const sendHolds = new Promise<void>((resolve) => (releaseSend = resolve));
    let sendFailed!: () => void;
    const failedUncommitted = new Promise<void>((resolve) => (sendFailed = resolve));
    // The send's failure holds the row (uncommitted) while the queue end reads the pending ones and waits.
    const send = store.db.transaction().execute(async (trx) => {
      expect(await messageStatusRepository.markFailed(trx, id, Date.now(), 'refused by the network')).toBeDefined();
      sendFailed();
      await sendHolds;
    });
    await failedUncommitted;
    const ending = store.db.transaction().execute((trx) => endQueueBatch(trx, end, Date.now()));
    // Released only once the queue end is waiting for the row the send holds.
    await waitFor(
      async () =>
        (
          await sql<{ n: number }>`select count(*)::int as n from pg_stat_activity
            where datname = current_database() and wait_event_type = 'Lock'`.execute(gw.app.store.db)
        ).rows[0]!.n,
      (n) => n > 0,
      { what: 'the queue end waiting for the row lock' },
    );
    releaseSend();
    await send;
    const ended = await ending;
    expect(ended).toBe(0);
    const row = await store.db.selectFrom('messages').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    expect(row.failed_reason).toBe('refused by the network');
  });
});
