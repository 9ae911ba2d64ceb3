// Group receipts per member (issue 24, item 2; docs/whatsapp.md, Group receipts), on SQLite and PostgreSQL: the
// members' receipts of a group message (message_receipts, src/messages/receipts.ts) are each written once, a read
// coming first counts as the delivery too, many written at once from separate transactions end as one row per member,
// and receipts naming a message that is not the device's own outgoing one are dropped. Through the sandbox: every
// member's phone receipts for itself, the message moves on the first member's, its events are recorded once
// however many receipts arrive together, and `receipts` is on the group message only.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ulid } from 'ulid';
import { receiptsRepository, type MemberReceipt } from '../../src/messages/receipts.js';
import { noStoreAvailable, startGateway, type TestGateway } from '../helpers/gateway.js';
import { messageRow } from '../helpers/rows.js';
import { waitFor } from '../helpers/wait.js';
import { pairedWithWebhook, startReceiver, type Receiver } from '../events/helpers.js';
import { adminGroup, numbers } from '../groups/helpers.js';

const fresh = numbers('62834');
const DEVICE = '6283499000001';

describe.skipIf(noStoreAvailable)('group receipts', () => {
  let gw: TestGateway;
  let hooks: Receiver;
  let deviceId: number;
  let accountId: number;

  beforeAll(async () => {
    hooks = await startReceiver();
    gw = await startGateway({
      build: { sandbox: { deliveryDelayMs: 5, readDelayMs: 5 } },
      config: { sendIntervalMs: 0, allowPrivateUrls: true },
    });
    deviceId = (await pairedWithWebhook(gw, DEVICE, hooks.url)).id as number;
    const row = await gw.app.store.db
      .selectFrom('devices')
      .select('account_id')
      .where('id', '=', deviceId)
      .executeTakeFirstOrThrow();
    accountId = Number(row.account_id);
  });
  afterAll(async () => {
    await gw?.close();
    await hooks?.close();
  });

  /** An outgoing group message of the device, stored as sent, straight into the store. */
  async function groupMessage(overrides: Parameters<typeof messageRow>[3] = {}): Promise<string> {
    const id = ulid();
    await gw.app.store.db
      .insertInto('messages')
      .values(
        messageRow(id, accountId, deviceId, { receiver: '120363000000000001@g.us', status: 'sent', ...overrides }),
      )
      .execute();
    return id;
  }

  const receipts = async (id: string) => (await receiptsRepository.forMessages(gw.app.store.db, [id])).get(id) ?? [];
  const receipt = (id: string, phone: string, status: MemberReceipt['status'], at: number): MemberReceipt => ({
    id,
    deviceId,
    phone,
    status,
    at,
  });

  it('writes each time once: a repeated receipt changes nothing, and a read coming first is the delivery too', async () => {
    const id = await groupMessage();
    const db = gw.app.store.db;
    await receiptsRepository.record(db, [receipt(id, '628340000011', 'delivered', 1_000)]);
    await receiptsRepository.record(db, [receipt(id, '628340000011', 'delivered', 2_000)]);
    await receiptsRepository.record(db, [receipt(id, '628340000011', 'read', 3_000)]);
    await receiptsRepository.record(db, [receipt(id, '628340000011', 'read', 4_000)]);
    // Read before delivered, and both of one member in one batch.
    await receiptsRepository.record(db, [receipt(id, '628340000012', 'read', 5_000)]);
    await receiptsRepository.record(db, [receipt(id, '628340000012', 'delivered', 4_500)]);
    await receiptsRepository.record(db, [
      receipt(id, '628340000013', 'delivered', 6_000),
      receipt(id, '628340000013', 'read', 7_000),
      receipt(id, '628340000013', 'delivered', 6_500),
    ]);
    expect(await receipts(id)).toEqual([
      { phone: '628340000011', delivered_at: 1_000, read_at: 3_000 },
      { phone: '628340000012', delivered_at: 5_000, read_at: 5_000 },
      { phone: '628340000013', delivered_at: 6_000, read_at: 7_000 },
    ]);
  });

  it('drops receipts naming another device’s message, an incoming message or no message', async () => {
    const own = await groupMessage();
    const incoming = await groupMessage({ direction: 'incoming' });
    const db = gw.app.store.db;
    await receiptsRepository.record(db, [
      { ...receipt(own, '628340000021', 'delivered', 1_000), deviceId: deviceId + 1000 },
      receipt(incoming, '628340000021', 'delivered', 1_000),
      receipt(ulid(), '628340000021', 'delivered', 1_000),
      receipt(own, '628340000022', 'delivered', 2_000),
    ]);
    expect(await receipts(own)).toEqual([{ phone: '628340000022', delivered_at: 2_000, read_at: null }]);
    expect(await receipts(incoming)).toEqual([]);
  });

  it('ends as one row per member when many transactions write the same members at once', async () => {
    const id = await groupMessage();
    const members = Array.from({ length: 20 }, (_, i) => `62834000010${String(i).padStart(2, '0')}`);
    // 40 transactions, each with every member's delivery and half the members' reads, in an order of its own.
    const writers = Array.from({ length: 40 }, (_, w) => {
      const batch = members.flatMap((phone, i) => [
        receipt(id, phone, 'delivered', 10_000 + w),
        ...(i % 2 === 0 ? [receipt(id, phone, 'read', 20_000 + w)] : []),
      ]);
      const rotated = [...batch.slice((w * 7) % batch.length), ...batch.slice(0, (w * 7) % batch.length)];
      return gw.app.store.db.transaction().execute((trx) => receiptsRepository.record(trx, rotated));
    });
    await Promise.all(writers);
    const rows = await receipts(id);
    expect(rows.map((r) => r.phone)).toEqual(members);
    for (const [i, row] of rows.entries()) {
      expect(row.delivered_at).toBeGreaterThanOrEqual(10_000);
      expect(row.delivered_at).toBeLessThan(20_040);
      if (i % 2 === 0) expect(row.read_at).toBeGreaterThanOrEqual(20_000);
      else expect(row.read_at).toBeNull();
    }
  });

  it('through the sandbox: every member receipts, the message moves on the first, and its events are recorded once', async () => {
    const members = fresh(12);
    for (const phone of members) await gw.request('POST', '/sandbox/phones', { phone, auto_read: true });
    const group = await adminGroup(gw, DEVICE, 'Receipted', members);
    const sent = await gw.request('POST', `/groups/${group.id}/send`, { type: 'chat', params: { text: 'all of you' } });
    expect(sent.status, JSON.stringify(sent.body)).toBe(200);
    const id = sent.body.data.id as string;
    const message = await waitFor(
      async () => (await gw.request('GET', `/messages/${id}`)).body.data,
      (m) => m.receipts?.length === members.length && m.receipts.every((r: any) => r.read_at !== null),
      { what: 'every member read the group message' },
    );
    expect(message.status).toBe('delivered');
    expect(message.receipts.map((r: any) => r.phone)).toEqual([...members].sort());
    for (const r of message.receipts) {
      expect(r).toEqual({ phone: expect.any(String), delivered_at: expect.any(String), read_at: expect.any(String) });
    }
    // The message took its times from the member receipt that moved it: the first one recorded.
    expect(message.receipts.map((r: any) => r.delivered_at)).toContain(message.delivered_at);
    expect(message.receipts.map((r: any) => r.read_at)).toContain(message.read_at);

    const listed = await gw.request('GET', `/messages?device=${DEVICE}&limit=5`);
    expect(listed.body.data.find((m: any) => m.id === id).receipts).toEqual(message.receipts);

    const events = await gw.app.store.db
      .selectFrom('webhook_events')
      .select('type')
      .where('device_id', '=', deviceId)
      .where('payload', 'like', `%${id}%`)
      .execute();
    const count = (type: string) => events.filter((e) => e.type === type).length;
    // Once, also when a member's receipt overtook the send's own write.
    expect(count('message.sent')).toBe(1);
    expect([count('message.delivered'), count('message.read')]).toEqual([1, 1]);
  });

  it('describes `receipts` in the OpenAPI document’s message object', async () => {
    const doc = (await gw.request('GET', '/openapi.json', undefined, null)).body;
    const message = doc.paths['/messages/{id}'].get.responses['200'].content['application/json'].schema.properties.data;
    const shown = message.$ref === undefined ? message : doc.components.schemas[message.$ref.split('/').pop()];
    expect(shown.required ?? []).not.toContain('receipts');
    expect(shown.properties.receipts.items.properties).toMatchObject({
      phone: { type: 'string' },
      delivered_at: expect.anything(),
      read_at: expect.anything(),
    });
  });

  it('shows no receipts on a direct message, and an empty list on a group message no member has receipted', async () => {
    const [friend] = fresh(1) as [string];
    const direct = await gw.request('POST', '/messages', {
      device: DEVICE,
      receiver: friend,
      type: 'chat',
      params: { text: 'just you' },
    });
    expect(direct.status, JSON.stringify(direct.body)).toBe(200);
    const shown = await gw.request('GET', `/messages/${direct.body.data.id}`);
    expect(shown.body.data).not.toHaveProperty('receipts');
    const waiting = await groupMessage();
    expect((await gw.request('GET', `/messages/${waiting}`)).body.data.receipts).toEqual([]);
  });
});
