// messageStatusRepository.changeMany: the `sent`, delivery and read changes of devices with no webhook, written as
// one statement with each column's values in one parameter (unnest on PostgreSQL, json_each on SQLite). Each change
// moves a message only forward, only for its own device, once even when named twice; on both stores, for batches
// past the 256 the padded statements were cut at.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MessageRow } from '../../src/messages/repository.js';
import { messageStatusRepository } from '../../src/messages/status-repository.js';
import { noStoreAvailable, startGateway, type TestGateway } from '../helpers/gateway.js';
import { outgoingRows, type OutgoingRows } from '../helpers/outgoing-rows.js';

describe.skipIf(noStoreAvailable)('status changes in one statement', () => {
  let gw: TestGateway;
  let deviceId: number;
  let rows: OutgoingRows;

  beforeAll(async () => {
    gw = await startGateway();
    rows = await outgoingRows(gw, 'batch', '4915100000081', '4917600000082');
    ({ deviceId } = rows);
  });
  afterAll(() => gw?.close());

  const message = (fields: Partial<MessageRow> = {}) => rows.insert(fields);

  async function row(id: string): Promise<MessageRow> {
    return gw.app.store.db.selectFrom('messages').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  }

  it('marks 300 pending messages sent, each with its own time and rendering, and nothing already sent', async () => {
    const ids = await Promise.all(Array.from({ length: 300 }, () => message()));
    const already = await message({ status: 'sent', sent_at: 5 });
    const seqs = await Promise.all(ids.map(async (id) => (await row(id)).seq));
    const changes = ids.map((id, i) => ({
      id,
      seq: seqs[i]!,
      deviceId,
      at: 1_000 + i,
      renderedAs: i % 2 === 0 ? 'text' : null,
    }));
    await messageStatusRepository.changeMany(gw.app.store.db, 'sent', [
      ...changes,
      { id: already, seq: (await row(already)).seq, deviceId, at: 9_999, renderedAs: 'text' },
    ]);
    for (const [i, id] of ids.entries()) {
      expect(await row(id)).toMatchObject({
        status: 'sent',
        sent_at: 1_000 + i,
        rendered_as: i % 2 === 0 ? 'text' : null,
      });
    }
    expect(await row(already)).toMatchObject({ status: 'sent', sent_at: 5, rendered_as: null });
  });

  it('records deliveries forward only, for the message’s own device, the first of two for one message', async () => {
    const sent = await message({ status: 'sent', sent_at: 10 });
    const pending = await message();
    const late = await message({ status: 'failed', failed_at: 20, failed_reason: 'gave up' });
    const refused = await message({ status: 'failed', sent_at: 10, failed_at: 20, failed_reason: 'refused' });
    const other = await message({ status: 'sent', sent_at: 10 });
    await messageStatusRepository.changeMany(gw.app.store.db, 'delivered', [
      { id: sent, deviceId, at: 100 },
      { id: sent, deviceId, at: 200 },
      { id: pending, deviceId, at: 101 },
      { id: late, deviceId, at: 102 },
      { id: refused, deviceId, at: 103 },
      { id: other, deviceId: deviceId + 1_000, at: 104 },
    ]);
    expect(await row(sent)).toMatchObject({ status: 'delivered', delivered_at: 100, sent_at: 10 });
    expect(await row(pending)).toMatchObject({ status: 'delivered', delivered_at: 101, sent_at: 101 });
    expect(await row(late)).toMatchObject({ status: 'delivered', sent_at: 102, failed_at: null, failed_reason: null });
    expect(await row(refused)).toMatchObject({ status: 'failed', delivered_at: null, failed_reason: 'refused' });
    expect(await row(other)).toMatchObject({ status: 'sent', delivered_at: null });
  });

  it('records reads once, implying delivery', async () => {
    const delivered = await message({ status: 'delivered', sent_at: 10, delivered_at: 20 });
    const sent = await message({ status: 'sent', sent_at: 10 });
    const read = await message({ status: 'delivered', sent_at: 10, delivered_at: 20, read_at: 30 });
    await messageStatusRepository.changeMany(gw.app.store.db, 'read', [
      { id: delivered, deviceId, at: 300 },
      { id: sent, deviceId, at: 301 },
      { id: read, deviceId, at: 302 },
    ]);
    expect(await row(delivered)).toMatchObject({ status: 'delivered', delivered_at: 20, read_at: 300 });
    expect(await row(sent)).toMatchObject({ status: 'delivered', delivered_at: 301, read_at: 301, sent_at: 10 });
    expect(await row(read)).toMatchObject({ read_at: 30 });
  });

  it('does nothing for an empty batch', async () => {
    await messageStatusRepository.changeMany(gw.app.store.db, 'read', []);
  });
});
