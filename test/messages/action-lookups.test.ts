// The look-up before an action's transaction (src/messages/message-lookups.ts) reads only whose message it is; the
// action decides on the row read again in its transaction, and a message gone in between (retention) is a 404 that
// keeps nothing, its Idempotency-Key free again. Both stores.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { messagesRepository } from '../../src/messages/repository.js';
import { TEST_TOKEN, noStoreAvailable, startGateway, type TestGateway } from '../helpers/gateway.js';
import { createPairedDevice } from '../helpers/pairing.js';
import { waitFor } from '../helpers/wait.js';

describe.skipIf(noStoreAvailable)('action look-ups', () => {
  let gw: TestGateway;
  let phone: string;

  beforeAll(async () => {
    gw = await startGateway({
      build: { sandbox: { deliveryDelayMs: 5, readDelayMs: 5 } },
      config: { sendIntervalMs: 0 },
    });
    phone = (await createPairedDevice(gw, '6281577000002')).phone;
  });
  afterAll(() => gw?.close());

  const get = async (id: string) => (await gw.request('GET', `/messages/${id}`)).body.data;

  it('an edit whose message is gone between the look-up and its transaction is 404 and keeps nothing', async () => {
    const res = await gw.request('POST', '/messages', {
      device: phone,
      receiver: '6281577131313',
      type: 'chat',
      params: { text: 'soon gone' },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const id = res.body.data.id as string;
    await waitFor(
      () => get(id),
      (m) => m.status === 'sent' || m.status === 'delivered' || m.status === 'read',
      { what: `message ${id} sent` },
    );
    const owners = vi.spyOn(messagesRepository, 'ownersOf');
    // The read in the transaction finds nothing, as after retention deleted the row.
    const inTransaction = vi.spyOn(messagesRepository, 'find').mockResolvedValueOnce(undefined);
    try {
      const edit = await gw.app.inject({
        method: 'PATCH',
        url: `/messages/${id}`,
        headers: { authorization: `Bearer ${TEST_TOKEN}`, 'idempotency-key': 'gone-key' },
        payload: { text: 'too late' },
      });
      expect(edit.statusCode, edit.body).toBe(404);
      expect(edit.json()).toEqual({ code: 404, status: 404, message: 'Message not found' });
      expect(owners).toHaveBeenCalled();
      expect(inTransaction).toHaveBeenCalledTimes(1);
    } finally {
      owners.mockRestore();
      inTransaction.mockRestore();
    }
    expect(await get(id)).toMatchObject({ message: 'soon gone' });
    const keys = await gw.app.store.db
      .selectFrom('idempotency_keys')
      .select('key')
      .where('key', '=', 'gone-key')
      .execute();
    expect(keys).toEqual([]);
    // The message is there again: the same key and edit now succeed.
    const again = await gw.app.inject({
      method: 'PATCH',
      url: `/messages/${id}`,
      headers: { authorization: `Bearer ${TEST_TOKEN}`, 'idempotency-key': 'gone-key' },
      payload: { text: 'in time' },
    });
    expect(again.statusCode, again.body).toBe(200);
    expect(again.json().data).toMatchObject({ id, message: 'in time' });
  });
});
