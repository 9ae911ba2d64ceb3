// docs/internals.md, WhatsApp and sandbox accounts: `sent` means the network took the message; a network that
// refuses it afterwards (on WhatsApp: a negative acknowledgement such as 463)
// ends it `failed` with `failed_reason`, and `message.failed` is recorded. A
// refusal never undoes a delivery, and a later receipt never revives it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { noStoreAvailable, type TestGateway } from '../helpers/gateway.js';
import { startInjectedGateway, type Inject } from '../helpers/injected-sandbox.js';
import { createPairedDevice } from '../helpers/pairing.js';
import { waitFor } from '../helpers/wait.js';

describe.skipIf(noStoreAvailable)('a refusal after sent', () => {
  let gw: TestGateway;
  let device: { id: number; phone: string };
  let inject: Inject;
  beforeAll(async () => {
    ({ gw, device, inject } = await startInjectedGateway('6281700000001'));
  });
  afterAll(() => gw?.close());

  const message = async (id: string) => (await gw.request('GET', `/messages/${id}`)).body.data;
  const quota = async () => (await gw.request('GET', `/devices/${device.id}`)).body.data.subscription;
  async function sendTo(receiver: string): Promise<string> {
    const res = await gw.request('POST', '/messages', {
      device: device.phone,
      receiver,
      type: 'chat',
      params: { text: 'x' },
    });
    expect(res.status).toBe(200);
    return res.body.data.id;
  }
  const events = async (type: string) =>
    (await gw.app.store.db.selectFrom('webhook_events').select('payload').where('type', '=', type).execute()).map((e) =>
      JSON.parse(e.payload),
    );

  it('ends a sent message failed with the reason, records message.failed, keeps the quota unit', async () => {
    // ...0003 is offline: the message stays `sent`.
    const id = await sendTo('6281799990003');
    await waitFor(
      () => message(id),
      (m) => m.status === 'sent',
      { what: 'sent' },
    );
    const before = await quota();
    expect(before).toMatchObject({ quote_used: expect.stringMatching(/^[1-9]\d*$/) });
    inject(device.id, {
      type: 'message_status',
      id,
      status: 'failed',
      reason: 'refused by the network (463)',
      at: new Date(),
    });
    const failed = await waitFor(
      () => message(id),
      (m) => m.status === 'failed',
      { what: 'failed' },
    );
    expect(failed.failed_reason).toBe('refused by the network (463)');
    expect(failed.failed_at).not.toBeNull();
    expect(failed.sent_at).not.toBeNull();
    // It reached the network, so its unit stays used (docs/internals.md, Quota: only what never got there is given back).
    expect(await quota()).toEqual(before);
    const recorded = await events('message.failed');
    expect(recorded.map((e) => e.data.id)).toContain(id);

    // A receipt arriving later does not bring it back.
    inject(device.id, { type: 'message_status', id, status: 'delivered', at: new Date() });
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect((await message(id)).status).toBe('failed');
  });

  it('never fails a message that was delivered', async () => {
    const id = await sendTo('6281799990011');
    await waitFor(
      () => message(id),
      (m) => m.status === 'delivered',
      { what: 'delivered' },
    );
    inject(device.id, { type: 'message_status', id, status: 'failed', reason: 'late refusal', at: new Date() });
    await new Promise((resolve) => setTimeout(resolve, 200));
    const after = await message(id);
    expect(after.status).toBe('delivered');
    expect(after.failed_reason).toBeNull();
  });

  it("ignores a refusal naming another device's message", async () => {
    const other = await createPairedDevice(gw, '6281700000002');
    const res = await gw.request('POST', '/messages', {
      device: other.phone,
      receiver: '6281799990003',
      type: 'chat',
      params: { text: 'y' },
    });
    const id = res.body.data.id as string;
    await waitFor(
      () => message(id),
      (m) => m.status === 'sent',
      { what: 'sent' },
    );
    inject(device.id, { type: 'message_status', id, status: 'failed', reason: 'wrong device', at: new Date() });
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect((await message(id)).status).toBe('sent');
  });
});
