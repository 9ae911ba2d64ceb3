// The event log (src/events/log.ts, log-follow.ts; docs/events.md): every event of every device is appended in the
// transaction of its change, read in order after a cursor, never skipped (PostgreSQL: a transaction that commits
// late is not overtaken), followed live, and removed by retention.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CompiledQuery, sql, type SelectQueryBuilder } from 'kysely';
import pg from 'pg';
import { channelOf } from '../../src/cluster/signals.js';
import { recordEvent, type EventDevice } from '../../src/events/record.js';
import { afterCursor, decodeCursor, encodeCursor, isCursor, readLog, type LoggedEvent } from '../../src/events/log.js';
import { LogTail } from '../../src/events/log-follow.js';
import { devicesRepository } from '../../src/devices/repository.js';
import { systemClock } from '../../src/clock.js';
import { noStoreAvailable, startGateway, storeKind, type TestGateway } from '../helpers/gateway.js';
import { createPairedDevice } from '../helpers/pairing.js';
import { waitFor } from '../helpers/wait.js';
import type { Database } from '../../src/store/schema.js';
import { settledHead } from './log-helpers.js';

const DAY_MS = 24 * 60 * 60_000;

type LogRows = SelectQueryBuilder<Database, 'events', { seq: number; xact: number; id: string }>;

describe.skipIf(noStoreAvailable)(`event log (${storeKind})`, () => {
  let gw: TestGateway;
  let plain: EventDevice;
  let hooked: EventDevice;
  beforeAll(async () => {
    gw = await startGateway({
      config: { sendIntervalMs: 0, allowPrivateUrls: true },
      build: { eventLog: { pollMs: 50 } },
    });
    const a = await gw.request('POST', '/devices', { package: 'BETA', name: 'no webhook' });
    const b = await gw.request('POST', '/devices', { package: 'BETA', name: 'with webhook' });
    // A receiver nobody listens on: deliveries stay pending, which is all this test looks at.
    await gw.request('PATCH', `/devices/${b.body.data.id}`, { webhook_url: 'http://127.0.0.1:9/hook' });
    plain = (await devicesRepository.findById(gw.app.store.db, a.body.data.id))!;
    hooked = (await devicesRepository.findById(gw.app.store.db, b.body.data.id))!;
  });
  afterAll(() => gw?.close());

  const db = () => gw.app.store.db;
  const all = async (after: string | null = null) => readLog(db(), after, {}, 1_000);

  // First: the log is empty, so these events are its front (retention walks the log from the front).
  it('retention removes events older than GATEWAY_EVENT_RETENTION_DAYS (default 7) from the front of the log', async () => {
    const now = Date.now();
    const old = await recordEvent(db(), plain, 'message.sent', {}, now - 8 * DAY_MS);
    const kept = await recordEvent(db(), plain, 'message.sent', {}, now - 6 * DAY_MS);
    // Old, but behind one that is not: it goes once the events before it have (the log is removed in order).
    const behind = await recordEvent(db(), plain, 'message.sent', {}, now - 9 * DAY_MS);
    const report = await gw.app.services.retention.sweep();
    expect(report.events).toBe(1);
    const left = await db().selectFrom('events').select('id').orderBy('seq').execute();
    expect(left.map((r) => r.id)).toEqual([kept, behind]);
    expect(old).not.toBe(kept);
  });

  it('cursors: 32 hex digits, in log order as strings, and nothing else is one', () => {
    expect(encodeCursor(0, 1)).toBe('00000000000000000000000000000001');
    expect(encodeCursor(5, 2) > encodeCursor(4, 900)).toBe(true);
    expect(decodeCursor(encodeCursor(123456, 789))).toEqual({ xact: 123456, seq: 789 });
    for (const bad of ['', '1', 'g'.repeat(32), '0'.repeat(31), '0'.repeat(33), 'A'.repeat(32)]) {
      expect(isCursor(bad), bad).toBe(false);
    }
  });

  it('appends every event of every device, with or without a webhook; deliveries only where there is one', async () => {
    const before = await settledHead(db());
    const now = Date.now();
    const idA = await recordEvent(db(), plain, 'message.sent', { n: 1 }, now);
    const idB = await recordEvent(db(), hooked, 'message.sent', { n: 2 }, now);
    await settledHead(db());
    const events = await all(before);
    expect(events.map((e) => e.id)).toEqual([idA, idB]);
    const [first] = events as [LoggedEvent];
    expect(first).toMatchObject({
      type: 'message.sent',
      accountId: plain.account_id,
      deviceId: plain.id,
      createdAt: now,
    });
    expect(JSON.parse(first.body)).toEqual({
      id: idA,
      type: 'message.sent',
      device: { id: plain.id, phone: plain.phone },
      created_at: new Date(now).toISOString(),
      data: { n: 1 },
    });
    const deliveries = await db().selectFrom('webhook_events').select('id').where('id', 'in', [idA, idB]).execute();
    expect(deliveries.map((d) => d.id)).toEqual([idB]);
  });

  it('pages after a cursor, oldest first, with no repeat and no gap; filters by account, device and type', async () => {
    const start = await settledHead(db());
    const ids: string[] = [];
    for (let i = 0; i < 7; i++) {
      const device = i % 2 === 0 ? plain : hooked;
      ids.push(await recordEvent(db(), device, i % 3 === 0 ? 'message.read' : 'message.sent', { i }, Date.now()));
    }
    await settledHead(db());
    const seen: string[] = [];
    let cursor = start;
    for (;;) {
      const page = await readLog(db(), cursor, {}, 3);
      if (page.length === 0) break;
      expect(page.length).toBeLessThanOrEqual(3);
      seen.push(...page.map((e) => e.id));
      cursor = page[page.length - 1]!.cursor;
    }
    expect(seen).toEqual(ids);

    const onlyPlain = await readLog(db(), start, { deviceIds: [plain.id] }, 100);
    expect(onlyPlain.map((e) => e.id)).toEqual(ids.filter((_, i) => i % 2 === 0));
    const reads = await readLog(db(), start, { types: ['message.read'] }, 100);
    expect(reads.map((e) => e.id)).toEqual(ids.filter((_, i) => i % 3 === 0));
    const both = await readLog(db(), start, { deviceIds: [hooked.id], types: ['message.read'] }, 100);
    expect(both.map((e) => e.id)).toEqual([ids[3]]);
    expect(await readLog(db(), start, { accountId: plain.account_id }, 100)).toHaveLength(7);
    expect(await readLog(db(), start, { accountId: plain.account_id + 1000 }, 100)).toEqual([]);
    expect(await readLog(db(), start, { deviceIds: [] }, 100)).toEqual([]);
    expect(await readLog(db(), start, { types: [] }, 100)).toEqual([]);
    // Cursors grow along the log.
    const cursors = (await all(start)).map((e) => e.cursor);
    expect([...cursors].sort()).toEqual(cursors);
    await expect(readLog(db(), 'not-a-cursor', {}, 10)).rejects.toThrow(RangeError);
  });

  // SQLite bounds an index by a row value's first column only, and its xact is 0 on every row: `(xact, seq) > (0, s)`
  // walked the log from its start on every read (src/events/log.ts, afterCursor).
  it.skipIf(storeKind !== 'sqlite')(
    'SQLite reads after a cursor from the cursor on, through an index, for every filter',
    async () => {
      const cursor = decodeCursor((await settledHead(db())) ?? encodeCursor(0, 0))!;
      const shapes = {
        'no filter': (q: LogRows) => q,
        account: (q: LogRows) => q.where('account_id', '=', plain.account_id),
        devices: (q: LogRows) => q.where('device_id', 'in', [plain.id, hooked.id]),
      };
      for (const [shape, narrow] of Object.entries(shapes)) {
        const rows = () => narrow(db().selectFrom('events').select(['seq', 'xact', 'id']));
        const query = afterCursor(db(), cursor, rows).orderBy('xact').orderBy('seq').limit(10).compile();
        const plan = await db().executeQuery<{ detail: string }>(
          CompiledQuery.raw(`explain query plan ${query.sql}`, [...query.parameters]),
        );
        const steps = plan.rows.map((row) => row.detail);
        // Every step is an index search, and the one that holds the cursor's xact starts after its seq.
        expect(
          steps.filter((step) => step.startsWith('SCAN')),
          `${shape}: ${steps.join('; ')}`,
        ).toEqual([]);
        expect(
          steps.some((step) => /xact=\? AND seq>\?/.test(step)),
          `${shape}: ${steps.join('; ')}`,
        ).toBe(true);
      }
      // And what it reads is what comes after the cursor: nothing, for a cursor past every xact of this store.
      expect(await readLog(db(), encodeCursor(cursor.xact + 1, 0), {}, 10)).toEqual([]);
    },
  );

  it('logs the status changes of a device with no webhook (the dispatcher path)', async () => {
    const device = await createPairedDevice(gw, '6281577000001');
    const start = await settledHead(db());
    const res = await gw.request('POST', '/messages', {
      device: device.phone,
      receiver: '6281577000099',
      type: 'chat',
      params: { text: 'logged' },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const id = res.body.data.id as string;
    const events = await waitFor(
      () => readLog(db(), start, { deviceIds: [device.id] }, 100),
      (found) => found.some((e) => e.type === 'message.sent'),
      { what: 'message.sent in the log' },
    );
    const sent = events.find((e) => e.type === 'message.sent')!;
    expect(JSON.parse(sent.body).data.id).toBe(id);
    const deliveries = await db()
      .selectFrom('webhook_events')
      .select('id')
      .where('device_id', '=', device.id)
      .execute();
    expect(deliveries).toEqual([]);
  });

  it('a tail follows live: woken after the commit, in order, every event once', async () => {
    const got: LoggedEvent[] = [];
    const tail = new LogTail({
      db: db(),
      watch: gw.app.services.eventLog.watch,
      clock: systemClock,
      filter: { deviceIds: [plain.id] },
      after: await settledHead(db()),
      batch: 4,
      deliver: (events) => {
        got.push(...events);
        return true;
      },
    });
    tail.start();
    const ids: string[] = [];
    for (let i = 0; i < 10; i++) {
      ids.push(await recordEvent(db(), plain, 'message.delivered', { i }, Date.now()));
      if (i % 3 === 0) gw.app.services.eventLog.signal.ring();
    }
    // Not rung after the last ones: the head poll finds them.
    await waitFor(
      () => got.length,
      (n) => n >= 10,
      { what: 'the tail to see 10 events' },
    );
    await tail.stop();
    expect(got.map((e) => e.id)).toEqual(ids);
    expect(tail.cursor).toBe(got[9]!.cursor);
  });

  it('a tail whose consumer says stop stops, with its cursor after what it took', async () => {
    const start = await settledHead(db());
    const ids = [
      await recordEvent(db(), plain, 'message.read', {}, Date.now()),
      await recordEvent(db(), plain, 'message.read', {}, Date.now()),
    ];
    let stopped = false;
    const tail = new LogTail({
      db: db(),
      watch: gw.app.services.eventLog.watch,
      clock: systemClock,
      // Only this device: the sandbox may still report on the message an earlier test sent.
      filter: { deviceIds: [plain.id] },
      after: start,
      batch: 1,
      deliver: () => false,
      onStop: () => {
        stopped = true;
      },
    });
    tail.start();
    await waitFor(
      () => stopped,
      (s) => s,
      { what: 'the tail to stop' },
    );
    await settledHead(db());
    const [first] = await readLog(db(), start, { deviceIds: [plain.id] }, 1);
    expect(first?.id).toBe(ids[0]);
    expect(tail.cursor).toBe(first?.cursor);
    await tail.stop();
  });
});

describe.skipIf(noStoreAvailable || storeKind !== 'postgres')('event log on PostgreSQL: commits out of order', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway();
  });
  afterAll(() => gw?.close());

  it('a transaction that commits after a later one is read before it, and neither is skipped nor repeated', async () => {
    const db = gw.app.store.db;
    const created = await gw.request('POST', '/devices', { package: 'BETA', name: 'out of order' });
    const device = (await devicesRepository.findById(db, created.body.data.id))!;
    const start = await settledHead(db);
    const before = await recordEvent(db, device, 'message.sent', { step: 'before' }, Date.now());

    // T1 appends first (its transaction id and its seq are the lower ones) and stays open.
    let commitEarly!: () => void;
    const earlyMayCommit = new Promise<void>((resolve) => (commitEarly = resolve));
    let earlyId = '';
    let earlyAppended!: () => void;
    const appended = new Promise<void>((resolve) => (earlyAppended = resolve));
    const early = db.transaction().execute(async (trx) => {
      earlyId = await recordEvent(trx, device, 'message.sent', { step: 'early' }, Date.now());
      earlyAppended();
      await earlyMayCommit;
    });
    await appended;
    // T2 appends later and commits first.
    const lateId = await db
      .transaction()
      .execute((trx) => recordEvent(trx, device, 'message.sent', { step: 'late' }, Date.now()));
    const seqs = await db.selectFrom('events').select(['id', 'seq', 'xact']).where('id', '=', lateId).execute();
    expect(seqs).toHaveLength(1);

    // While T1 is open, a reader gets what came before it and stops there: T2's event is held, not passed.
    // (A short transaction of another test on this server may hold the horizon a moment: waited for, never passed.)
    const first = await waitFor(
      () => readLog(db, start, { deviceIds: [device.id] }, 100),
      (events) => events.length > 0,
      { what: 'the event before the open transaction' },
    );
    expect(first.map((e) => e.id)).toEqual([before]);
    const cursor = first[0]!.cursor;
    // Nothing appears at the head beyond it either.
    expect(await readLog(db, cursor, { deviceIds: [device.id] }, 100)).toEqual([]);

    commitEarly();
    await early;
    const rest = await readLog(db, cursor, { deviceIds: [device.id] }, 100);
    expect(rest.map((e) => e.id)).toEqual([earlyId, lateId]);
    expect(await readLog(db, rest[1]!.cursor, { deviceIds: [device.id] }, 100)).toEqual([]);
    // Inserted in T2 with the higher seq, read in transaction order.
    const rows = await db.selectFrom('events').select(['id', 'seq']).where('id', 'in', [earlyId, lateId]).execute();
    const seqOf = new Map(rows.map((r) => [r.id, Number(r.seq)]));
    expect(seqOf.get(earlyId)!).toBeLessThan(seqOf.get(lateId)!);
  });

  it('a transaction open in another database of the server does not hold the log back', async () => {
    const db = gw.app.store.db;
    const created = await gw.request('POST', '/devices', { package: 'BETA', name: 'other database' });
    const device = (await devicesRepository.findById(db, created.body.data.id))!;
    const start = await settledHead(db);
    // Another database's session takes a transaction id and keeps it open (the server's oldest running one).
    const url = new URL(gw.location.databaseUrl!);
    url.pathname = '/postgres';
    const other = new pg.Client({ connectionString: url.toString() });
    await other.connect();
    try {
      await other.query('begin');
      await other.query('select pg_current_xact_id()');
      const id = await recordEvent(db, device, 'message.sent', { step: 'while another database waits' }, Date.now());
      const read = await waitFor(
        () => readLog(db, start, { deviceIds: [device.id] }, 100),
        (events) => events.length > 0,
        { what: 'the event, with the other database’s transaction still open' },
      );
      expect(read.map((e) => e.id)).toEqual([id]);
    } finally {
      await other.query('rollback').catch(() => undefined);
      await other.end();
    }
  });

  it('an appending transaction notifies the cluster channel with `e`, once however many rows', async () => {
    const db = gw.app.store.db;
    const channel = await channelOf(db);
    const listener = new pg.Client({ connectionString: gw.location.databaseUrl! });
    await listener.connect();
    const heard: string[] = [];
    listener.on('notification', (msg) => {
      if (msg.channel === channel) heard.push(msg.payload ?? '');
    });
    await listener.query(`listen "${channel}"`);
    try {
      const created = await gw.request('POST', '/devices', { package: 'BETA', name: 'notified' });
      const device = (await devicesRepository.findById(db, created.body.data.id))!;
      await db.transaction().execute(async (trx) => {
        for (let i = 0; i < 3; i++) await recordEvent(trx, device, 'message.sent', { i }, Date.now());
      });
      await waitFor(
        () => heard.filter((m) => m === 'e').length,
        (n) => n >= 1,
        { what: 'the e notification' },
      );
      // A marker sent after it arrives after it: by then every notification of the transaction has arrived.
      await sql`select pg_notify(${channel}, 'marker')`.execute(db);
      await waitFor(
        () => heard.includes('marker'),
        (yes) => yes,
        { what: 'the marker' },
      );
      expect(heard.filter((m) => m === 'e')).toEqual(['e']);
    } finally {
      await listener.end();
    }
  });
});
