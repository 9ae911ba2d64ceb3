// The announced status changes of one group commit (src/dispatch/announced.ts): written together, one statement per
// kind, with their events built from the rows those statements answer. The outcome and the events, in their order,
// are the ones the changes would have made one at a time in the order they came, on both stores: a receipt that
// overtook its message's `sent` records `message.sent` first, a message changed twice in one batch moves twice, a
// change that moves nothing records nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.js';
import { announcedChanges, type AnnouncedChange } from '../../src/dispatch/announced.js';
import { DeviceCache } from '../../src/dispatch/device-cache.js';
import { QueueReads } from '../../src/dispatch/queue-reads.js';
import type { MessageRow } from '../../src/messages/repository.js';
import { noStoreAvailable, startGateway, type TestGateway } from '../helpers/gateway.js';
import { outgoingRows, type OutgoingRows } from '../helpers/outgoing-rows.js';

describe.skipIf(noStoreAvailable)('announced status changes of one batch', () => {
  let gw: TestGateway;
  let deviceId: number;
  let rows: OutgoingRows;

  beforeAll(async () => {
    gw = await startGateway();
    rows = await outgoingRows(gw, 'announced', '4915100000091', '4917600000092');
    ({ deviceId } = rows);
  });
  afterAll(() => gw?.close());

  const message = (fields: Partial<MessageRow> = {}) => rows.insert(fields);

  async function row(id: string): Promise<MessageRow> {
    return gw.app.store.db.selectFrom('messages').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  }

  const seq = async (id: string) => (await row(id)).seq;

  /** The device's logged events of these messages, in log order: `<type> <message id> <status shown>`. */
  async function logged(ids: readonly string[]): Promise<string[]> {
    const rows = await gw.app.store.db
      .selectFrom('events')
      .select(['type', 'payload'])
      .where('device_id', '=', deviceId)
      .orderBy('xact')
      .orderBy('seq')
      .execute();
    return rows
      .map((r) => JSON.parse(r.payload) as { type: string; data: { id: string; status: string } })
      .filter((e) => ids.includes(e.data.id))
      .map((e) => `${e.type} ${e.data.id} ${e.data.status}`);
  }

  async function flush(changes: AnnouncedChange[]): Promise<void> {
    const collector = announcedChanges(new DeviceCache(new QueueReads(gw.app.store.db, 100), systemClock));
    await gw.app.store.db.transaction().execute((trx) => collector.flush(trx, changes));
  }

  it('records what one change at a time would, in the order the changes came', async () => {
    const a = await message();
    const b = await message();
    const c = await message({ status: 'delivered', sent_at: 2, delivered_at: 3, read_at: 4 });
    const d = await message({ status: 'sent', sent_at: 2 });
    await flush([
      { kind: 'read', id: b, deviceId, at: 1001 },
      { kind: 'sent', id: a, seq: await seq(a), deviceId, at: 1002, renderedAs: 'text' },
      // A again: the next run, after A's `sent`.
      { kind: 'delivered', id: a, deviceId, at: 1003 },
      { kind: 'read', id: c, deviceId, at: 1004 },
      // B again: the read moved it past `sent` already.
      { kind: 'sent', id: b, seq: await seq(b), deviceId, at: 1005, renderedAs: null },
      { kind: 'refused', id: d, deviceId, at: 1006, reason: 'refused by the network' },
    ]);
    expect(await logged([a, b, c, d])).toEqual([
      `message.sent ${b} sent`,
      `message.read ${b} delivered`,
      `message.sent ${a} sent`,
      `message.delivered ${a} delivered`,
      `message.failed ${d} failed`,
    ]);
    expect(await row(a)).toMatchObject({ status: 'delivered', sent_at: 1002, delivered_at: 1003, rendered_as: 'text' });
    expect(await row(b)).toMatchObject({ status: 'delivered', sent_at: 1001, delivered_at: 1001, read_at: 1001 });
    expect(await row(c)).toMatchObject({ status: 'delivered', read_at: 4 });
    expect(await row(d)).toMatchObject({ status: 'failed', failed_reason: 'refused by the network' });
  });

  it('records nothing for a batch that moves nothing, and nothing twice', async () => {
    const a = await message({ status: 'delivered', sent_at: 2, delivered_at: 3 });
    await flush([
      { kind: 'sent', id: a, seq: await seq(a), deviceId, at: 1001, renderedAs: null },
      { kind: 'delivered', id: a, deviceId, at: 1002 },
      { kind: 'read', id: a, deviceId, at: 1003 },
      { kind: 'read', id: a, deviceId, at: 1004 },
    ]);
    expect(await logged([a])).toEqual([`message.read ${a} delivered`]);
    expect(await row(a)).toMatchObject({ status: 'delivered', sent_at: 2, delivered_at: 3, read_at: 1003 });
  });
});
