// The webhook claim (src/events/claim-repository.ts; docs/internals.md, Webhooks): one statement leases due
// deliveries lane by lane (a device and one destination: its own webhook_url, or one account webhook), each lane
// giving only as many of its due rows as it has slots left under the bound, paused receivers left out, the earliest
// due first. Both stores walk the lanes through an index that leads by lane, so a claim's cost never grows with the
// backlog of lanes already at their bound.
//
// The rows here are due only at a time an hour ahead, which the test passes as the claim's `now`: the gateway's own
// deliverer, claiming at the real time, never takes them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CompiledQuery } from 'kysely';
import { eventsRepository, type ClaimParams } from '../../src/events/repository.js';
import { sqliteClaimStatement } from '../../src/events/claim-repository.js';
import { noStoreAvailable, startGateway, storeKind, type TestGateway } from '../helpers/gateway.js';

const HOUR = 3_600_000;

describe.skipIf(noStoreAvailable)(`claiming webhook deliveries by lane (${storeKind})`, () => {
  let gw: TestGateway;
  let account: number;
  const devices: Record<'busy' | 'some' | 'few' | 'paused' | 'later', number> = {
    busy: 0,
    some: 0,
    few: 0,
    paused: 0,
    later: 0,
  };
  let hook: string;
  const at = Date.now() + HOUR;
  let serial = 0;

  beforeAll(async () => {
    gw = await startGateway({ config: { allowPrivateUrls: true } });
    for (const name of Object.keys(devices) as Array<keyof typeof devices>) {
      const made = await gw.request('POST', '/devices', { package: 'BETA', name });
      devices[name] = made.body.data.id;
    }
    const webhook = await gw.request('POST', '/webhooks', { url: 'http://127.0.0.1:9/hook' });
    expect(webhook.status).toBe(201);
    hook = webhook.body.data.id;
    const device = await gw.app.store.db
      .selectFrom('devices')
      .select('account_id')
      .where('id', '=', devices.busy)
      .executeTakeFirstOrThrow();
    account = Number(device.account_id);
  });
  afterAll(() => gw?.close());

  /** `count` rows of one lane, due one ms apart from `due`; `leased`: in flight until an hour after `at`. */
  async function rows(deviceId: number, count: number, due: number, options: { hook?: string; leased?: boolean } = {}) {
    const ids: string[] = [];
    for (let i = 0; i < count; i++) {
      const id = `evt_claim_${++serial}`;
      ids.push(id);
      const until = options.leased === true ? at + HOUR : null;
      await gw.app.store.db
        .insertInto('webhook_events')
        .values({
          id,
          account_id: account,
          device_id: deviceId,
          type: 'message.sent',
          payload: '{}',
          url: 'http://127.0.0.1:9/hook',
          status: 'pending',
          attempts: 0,
          next_attempt_at: until ?? due + i,
          locked_until: until,
          created_at: due + i,
          delivered_at: null,
          failed_at: null,
          webhook_id: options.hook ?? null,
        })
        .execute();
    }
    return ids;
  }

  const params = (overrides: Partial<ClaimParams> = {}): ClaimParams => ({
    now: at,
    leaseUntil: at + 60_000,
    limit: 100,
    perDevice: 4,
    skipDevices: [devices.paused],
    skipWebhooks: [],
    skipLocked: storeKind === 'postgres',
    ...overrides,
  });

  it('each lane gives its earliest due rows up to its room; lanes at their bound, paused and not due give none', async () => {
    // A lane at its bound behind a long backlog, due before everything else.
    await rows(devices.busy, 4, 0, { leased: true });
    const busyBacklog = await rows(devices.busy, 300, at - 50_000);
    // One in flight: three slots left, of ten due.
    await rows(devices.some, 1, 0, { leased: true });
    const some = await rows(devices.some, 10, at - 40_000);
    // The busy device's account-webhook lane is a lane of its own, with all its slots.
    const busyHook = await rows(devices.busy, 6, at - 30_000, { hook });
    const few = await rows(devices.few, 2, at - 20_000);
    const paused = await rows(devices.paused, 5, at - 60_000);
    const later = await rows(devices.later, 3, at + 1);

    const claimed = await eventsRepository.claim(gw.app.store.db, params());
    const ids = claimed.map((event) => event.id).sort();
    expect(ids).toEqual([...some.slice(0, 3), ...busyHook.slice(0, 4), ...few].sort());
    expect(claimed.find((event) => event.id === busyHook[0])).toMatchObject({
      device_id: devices.busy,
      webhook_id: hook,
      account_id: account,
      type: 'message.sent',
      payload: '{}',
      attempts: 0,
    });
    const leased = await gw.app.store.db
      .selectFrom('webhook_events')
      .select(['id', 'locked_until', 'next_attempt_at'])
      .where('id', 'in', ids)
      .execute();
    expect(leased.every((row) => Number(row.locked_until) === at + 60_000)).toBe(true);
    expect(leased.every((row) => Number(row.next_attempt_at) === at + 60_000)).toBe(true);

    // Every lane is at its bound now, or empty of due rows: the next claim takes nothing.
    expect(await eventsRepository.claim(gw.app.store.db, params({ leaseUntil: at + 60_001 }))).toEqual([]);
    // Not paused any more: the paused lane gives its four earliest.
    const resumed = await eventsRepository.claim(gw.app.store.db, params({ leaseUntil: at + 60_002, skipDevices: [] }));
    expect(resumed.map((event) => event.id).sort()).toEqual(paused.slice(0, 4).sort());
    expect(busyBacklog.length + later.length).toBe(303);
  });

  it('takes at most `limit`, the earliest due first, across lanes', async () => {
    const a = await rows(devices.later, 1, at - 10_000);
    await gw.app.store.db
      .updateTable('webhook_events')
      .set({ status: 'delivered', locked_until: null })
      .where('id', 'like', 'evt_claim_%')
      .where('id', 'not in', a)
      .execute();
    const b = await rows(devices.few, 3, at - 9_000);
    const c = await rows(devices.some, 3, at - 8_000);
    const claimed = await eventsRepository.claim(gw.app.store.db, params({ leaseUntil: at + 60_003, limit: 4 }));
    expect(claimed.map((event) => event.id).sort()).toEqual([...a, ...b].sort());
    expect(c).toHaveLength(3);
  });

  // SQLite bounds an index by a row value's first column only, and without statistics its planner may sort the pending
  // rows by lane rather than walk the lane index: the statement names its indexes. Every read of webhook_events is an
  // index search, but the walk's first row.
  it.skipIf(storeKind !== 'sqlite')('on SQLite every read of the deliveries is an index search', async () => {
    for (const perDevice of [1, 4]) {
      const query = sqliteClaimStatement(params({ perDevice })).compile(gw.app.store.db);
      const plan = await gw.app.store.db.executeQuery<{ detail: string }>(
        CompiledQuery.raw(`explain query plan ${query.sql}`, [...query.parameters]),
      );
      const steps = plan.rows.map((row) => row.detail);
      const scans = steps.filter(
        (step) => step.startsWith('SCAN') && !/^SCAN (lanes|open_lanes|picked|\(subquery-\d+\))/.test(step),
      );
      expect(scans, steps.join('\n')).toEqual(['SCAN webhook_events USING INDEX webhook_events_lane_due']);
      const sorts = steps.filter((step) => step.includes('TEMP B-TREE'));
      // One sort: the picked heads by when they are due (at most the lanes' slots).
      expect(sorts, steps.join('\n')).toEqual(['USE TEMP B-TREE FOR ORDER BY']);
      expect(steps.filter((step) => step.includes('webhook_events_lane_due')).length).toBe(3 + perDevice);
    }
  });
});
