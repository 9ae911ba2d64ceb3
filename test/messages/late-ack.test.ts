// docs/whatsapp.md, Acknowledgements: a send given up for want of an acknowledgement (failed, never `sent`) is moved
// on by the network's own word arriving late: a late ack makes it `sent` (with message.sent), a delivery or read
// receipt `delivered`. A message the network refused after taking it stays failed (test/messages/refused.test.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { noStoreAvailable, type TestGateway } from '../helpers/gateway.js';
import { startInjectedGateway, type Inject } from '../helpers/injected-sandbox.js';
import { waitFor } from '../helpers/wait.js';

describe.skipIf(noStoreAvailable)('an acknowledgement or receipt after the send was given up', () => {
  let gw: TestGateway;
  let device: { id: number; phone: string };
  let inject: Inject;
  beforeAll(async () => {
    ({ gw, device, inject } = await startInjectedGateway('6281700000101'));
  });
  afterAll(() => gw?.close());

  const message = async (id: string) => (await gw.request('GET', `/messages/${id}`)).body.data;
  const events = async (type: string) =>
    (await gw.app.store.db.selectFrom('webhook_events').select('payload').where('type', '=', type).execute()).map(
      (e) => JSON.parse(e.payload).data.id as string,
    );

  /** A message as the dispatcher leaves it after its last attempt timed out: failed, never sent. */
  async function givenUp(): Promise<string> {
    // ...0003 is offline in the sandbox: no receipt of its own moves the message on.
    const res = await gw.request('POST', '/messages', {
      device: device.phone,
      receiver: '6281799990003',
      type: 'chat',
      params: { text: 'x' },
    });
    expect(res.status).toBe(200);
    const id = res.body.data.id as string;
    await waitFor(
      () => message(id),
      (m) => m.status === 'sent',
      { what: 'sent' },
    );
    await gw.app.store.db
      .updateTable('messages')
      .set({
        status: 'failed',
        sent_at: null,
        failed_at: Date.now(),
        failed_reason: 'gave up after 12 attempts: the network did not acknowledge the message in time',
      })
      .where('id', '=', id)
      .execute();
    return id;
  }

  it('a late ack moves it to sent and records message.sent', async () => {
    const id = await givenUp();
    inject(device.id, { type: 'message_status', id, status: 'sent', at: new Date() });
    const sent = await waitFor(
      () => message(id),
      (m) => m.status === 'sent',
      { what: 'sent after the late ack' },
    );
    expect(sent.failed_reason).toBeNull();
    expect(sent.sent_at).not.toBeNull();
    await waitFor(
      () => events('message.sent'),
      (ids) => ids.includes(id),
      { what: 'message.sent' },
    );
  });

  it('a late delivery, then a read, move it to delivered with both times', async () => {
    const id = await givenUp();
    inject(device.id, { type: 'message_status', id, status: 'delivered', at: new Date() });
    await waitFor(
      () => message(id),
      (m) => m.status === 'delivered',
      { what: 'delivered after the late receipt' },
    );
    const other = await givenUp();
    inject(device.id, { type: 'message_status', id: other, status: 'read', at: new Date() });
    const read = await waitFor(
      () => message(other),
      (m) => m.read_at !== null,
      { what: 'read after the late receipt' },
    );
    expect(read).toMatchObject({ status: 'delivered', failed_reason: null });
    expect(read.delivered_at).not.toBeNull();
  });
});
