// src/dispatch/queue-reads.ts over the real store (both dialects): lanes asking at once share one read of their queue
// heads and one of the send-time guard; each gets its own device's answer, in order, within the limit, and always
// read after it asked (never from a cache).
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { devicesRepository } from '../../src/devices/repository.js';
import { QueueReads } from '../../src/dispatch/queue-reads.js';
import { messagesRepository, type MessageRow } from '../../src/messages/repository.js';
import { noStoreAvailable, startGateway, type TestGateway } from '../helpers/gateway.js';
import { messageRow } from '../helpers/rows.js';

describe.skipIf(noStoreAvailable)('the lanes’ gathered reads', () => {
  let gw: TestGateway;
  const devices: number[] = [];
  let serial = 0;

  beforeAll(async () => {
    gw = await startGateway();
    await gw.app.services.accounts.setMaxDevices('default', 10);
    // Devices that never pair: no lane sends what this test stores.
    for (let i = 0; i < 4; i++) {
      const created = await gw.request('POST', '/devices', {
        package: 'BETA',
        name: `q${i}`,
        phone: `628199999060${i}`,
      });
      devices.push(created.body.data.id);
    }
  });
  afterAll(() => gw?.close());
  afterEach(() => vi.restoreAllMocks());

  function message(deviceId: number, status = 'pending'): Omit<MessageRow, 'seq'> {
    const i = ++serial;
    return {
      ...messageRow(`01QREAD${String(i).padStart(19, '0')}`, 1, deviceId, {
        status,
        message: `m${i}`,
        created_at: 1_000 + i,
      }),
      rendered_as: null,
      quoted: null,
    } as Omit<MessageRow, 'seq'>;
  }

  async function store(rows: Array<Omit<MessageRow, 'seq'>>): Promise<MessageRow[]> {
    // One at a time, so seq follows the order given.
    for (const row of rows) await messagesRepository.insertMany(gw.app.store.db, [row]);
    const ids = rows.map((row) => row.id);
    return gw.app.store.db.selectFrom('messages').selectAll().where('id', 'in', ids).orderBy('seq').execute();
  }

  it('each device its own next pending messages after its cursor, in order, at most the limit', async () => {
    const [a, b, c, d] = devices as [number, number, number, number];
    const stored = await store([
      message(a),
      message(b),
      message(a),
      message(a, 'sent'),
      message(b),
      message(a),
      message(c, 'failed'),
      message(a),
      message(b),
    ]);
    const of = (device: number) => stored.filter((row) => row.device_id === device && row.status === 'pending');
    const cursorA = of(a)[0]!.seq;
    const reads = new QueueReads(gw.app.store.db, 2);
    const gathered = vi.spyOn(messagesRepository, 'pendingAfterMany');
    const [headA, headB, headC, headD] = await Promise.all([
      reads.pendingAfter(a, cursorA),
      reads.pendingAfter(b, 0),
      reads.pendingAfter(c, 0),
      reads.pendingAfter(d, 0),
    ]);
    expect(headA!.map((row) => row.id)).toEqual(
      of(a)
        .slice(1, 3)
        .map((row) => row.id),
    );
    expect(headB!.map((row) => row.id)).toEqual(
      of(b)
        .slice(0, 2)
        .map((row) => row.id),
    );
    expect(headC).toEqual([]);
    expect(headD).toEqual([]);
    // Whole rows, as the one-device read gives them.
    expect(headB).toEqual(await messagesRepository.pendingAfter(gw.app.store.db, b, 0, 2));
    // One gathered read for the four lanes.
    expect(gathered).toHaveBeenCalledTimes(1);
    expect(gathered.mock.calls[0]![1]).toHaveLength(4);
  });

  it('two cursors of one device asked at once each get their own answer', async () => {
    const [, , , d] = devices as [number, number, number, number];
    const stored = await store([message(d), message(d), message(d)]);
    const reads = new QueueReads(gw.app.store.db, 100);
    const [all, after] = await Promise.all([reads.pendingAfter(d, 0), reads.pendingAfter(d, stored[0]!.seq)]);
    expect(all.map((row) => row.id)).toEqual(stored.map((row) => row.id));
    expect(after.map((row) => row.id)).toEqual(stored.slice(1).map((row) => row.id));
  });

  it('the guard of many devices in one read, each its own, none for a device not stored, never cached', async () => {
    const [a, b] = devices as [number, number];
    const reads = new QueueReads(gw.app.store.db, 100);
    // Told apart by their phones, so an answer given to the wrong device shows.
    await gw.app.store.db.updateTable('devices').set({ phone: '6281111100001' }).where('id', '=', a).execute();
    await gw.app.store.db.updateTable('devices').set({ phone: '6281111100002' }).where('id', '=', b).execute();
    const gathered = vi.spyOn(devicesRepository, 'senderStates');
    const [stateA, stateB, missing] = await Promise.all([
      reads.senderState(a),
      reads.senderState(b),
      reads.senderState(987_654),
    ]);
    expect(gathered).toHaveBeenCalledTimes(1);
    // Each exactly the guard's four fields of its own row (never the whole row, with its network session).
    const guardOf = async (id: number) => {
      const row = (await devicesRepository.findById(gw.app.store.db, id))!;
      return { status: row.status, paired_status: row.paired_status, phone: row.phone, deleted_at: row.deleted_at };
    };
    expect(stateA).toEqual(await guardOf(a));
    expect(stateB).toEqual(await guardOf(b));
    expect(stateA).toMatchObject({ status: 'ACTIVE', phone: '6281111100001', deleted_at: null });
    expect(stateB).toMatchObject({ status: 'ACTIVE', phone: '6281111100002', deleted_at: null });
    expect(missing).toBeUndefined();
    await gw.app.store.db.updateTable('devices').set({ status: 'SUSPENDED' }).where('id', '=', b).execute();
    expect(await reads.senderState(b)).toMatchObject({ status: 'SUSPENDED' });
    expect(await reads.senderState(a)).toMatchObject({ status: 'ACTIVE' });
    await gw.app.store.db.updateTable('devices').set({ status: 'ACTIVE' }).where('id', '=', b).execute();
  });

  it('device rows asked within one turn of the event loop come from one read, each its own, never cached', async () => {
    const [a, b] = devices as [number, number];
    const reads = new QueueReads(gw.app.store.db, 100);
    const gathered = vi.spyOn(devicesRepository, 'findByIds');
    // Asked from two callbacks of their own, as two sends' acknowledgements would be.
    const asked = await new Promise<Array<Promise<unknown>>>((resolve) => {
      const loads: Array<Promise<unknown>> = [];
      setImmediate(() => loads.push(reads.device(a)));
      setImmediate(() => {
        loads.push(reads.device(b), reads.device(987_654));
        resolve(loads);
      });
    });
    const [rowA, rowB, missing] = await Promise.all(asked);
    expect(gathered).toHaveBeenCalledTimes(1);
    expect(rowA).toEqual(await devicesRepository.findById(gw.app.store.db, a));
    expect(rowB).toEqual(await devicesRepository.findById(gw.app.store.db, b));
    expect(rowA).not.toEqual(rowB);
    expect(missing).toBeUndefined();
    await gw.app.store.db.updateTable('devices').set({ name: 'renamed' }).where('id', '=', a).execute();
    expect(await reads.device(a)).toMatchObject({ name: 'renamed' });
  });

  it('a failed read fails every lane that asked in it, and the next read goes to the store again', async () => {
    const [a, b] = devices as [number, number];
    const reads = new QueueReads(gw.app.store.db, 100);
    vi.spyOn(messagesRepository, 'pendingAfterMany').mockRejectedValueOnce(new Error('store down'));
    const failed = await Promise.allSettled([reads.pendingAfter(a, 0), reads.pendingAfter(b, 0)]);
    expect(failed.map((outcome) => outcome.status)).toEqual(['rejected', 'rejected']);
    expect(Array.isArray(await reads.pendingAfter(a, 0))).toBe(true);
  });

  it('the poll for work names exactly the devices with a pending message, one index probe each', async () => {
    const [a, b, c, d] = devices as [number, number, number, number];
    // Fresh statuses: earlier tests stored messages for these devices too.
    await gw.app.store.db.updateTable('messages').set({ status: 'sent' }).where('device_id', 'in', devices).execute();
    await store([message(a), message(a), message(b, 'sent'), message(c, 'failed'), message(c), message(d, 'sent')]);
    const found = await messagesRepository.devicesWithPending(gw.app.store.db, [a, b, c, d, 999_999]);
    expect([...found].sort((x, y) => x - y)).toEqual([a, c].sort((x, y) => x - y));
    expect(await messagesRepository.devicesWithPending(gw.app.store.db, [b, d])).toEqual([]);
  });
});
