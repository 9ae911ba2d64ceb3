// quotaRepository.lockQuotas and addQuotaUsed, each one statement with the
// whole list in one parameter (an array on PostgreSQL, JSON on SQLite), for
// lists of any length: every device asked for comes back once with its own
// quota, and each gets exactly its own count added, on both stores. And
// takeUnits (one statement on PostgreSQL): each device gets what it wants or
// what is left, exactly, also when two batches take from it at once; and
// giveBackMany, which locks the rows in the same order, so a batch giving
// back and one taking never deadlock.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { devicesRepository } from '../../src/devices/repository.js';
import { quotaRepository } from '../../src/messages/quota-repository.js';
import { noStoreAvailable, startGateway, type TestGateway } from '../helpers/gateway.js';

describe.skipIf(noStoreAvailable)('locking the quotas of an acceptance batch', () => {
  let gw: TestGateway;
  const ids: number[] = [];

  beforeAll(async () => {
    gw = await startGateway();
    const account = await gw.app.services.accounts.createAccount('quota-lock');
    for (let i = 0; i < 600; i++) {
      const row = await devicesRepository.insert(gw.app.store.db, {
        account_id: account.id,
        name: `lock ${i}`,
        phone: null,
        expected_phone: `62819${String(i).padStart(7, '0')}`,
        package_code: 'BETA',
        status: 'ACTIVE',
        paired_status: 'UNPAIRED',
        connected: 0,
        webhook_url: null,
        webhook_secret: 'whsec_test',
        // Each device's quota names it, so a row returned for the wrong id cannot go unnoticed.
        quota_limit: 1000 + i,
        quote_used: i,
        send_interval_ms: null,
        server_name: null,
        network_session: null,
        created_at: 1,
        updated_at: 1,
        deleted_at: null,
      });
      ids.push(row.id);
    }
  });
  afterAll(() => gw?.close());

  it.each([1, 2, 3, 5, 255, 256, 257, 600])('returns each of %i devices once, with its own quota', async (count) => {
    // Out of order, so the answer cannot line up with the question by accident.
    const asked = ids.slice(0, count).reverse();
    const rows = await gw.app.store.db.transaction().execute((trx) => quotaRepository.lockQuotas(trx, asked));
    expect(rows).toHaveLength(count);
    const byId = new Map(rows.map((row) => [Number(row.id), row]));
    expect(byId.size).toBe(count);
    for (const id of asked) {
      const i = ids.indexOf(id);
      expect(byId.get(id)).toMatchObject({ quota_limit: 1000 + i, quote_used: i });
    }
  });

  it('changes no quota', async () => {
    await gw.app.store.db.transaction().execute((trx) => quotaRepository.lockQuotas(trx, ids));
    const after = await gw.app.store.db
      .selectFrom('devices')
      .select(['id', 'quote_used'])
      .where('id', 'in', ids)
      .execute();
    for (const row of after) expect(row.quote_used).toBe(ids.indexOf(Number(row.id)));
  });

  it.each([1, 3, 5, 257])('adds each of %i devices its own count, once', async (count) => {
    const asked = ids.slice(100, 100 + count).reverse();
    const read = async () =>
      new Map(
        (await gw.app.store.db.selectFrom('devices').select(['id', 'quote_used']).where('id', 'in', ids).execute()).map(
          (row) => [Number(row.id), row.quote_used],
        ),
      );
    const before = await read();
    const units = new Map(asked.map((id, i) => [id, (i % 4) + 1]));
    await gw.app.store.db.transaction().execute((trx) => quotaRepository.addQuotaUsed(trx, units));
    const after = await read();
    for (const id of ids) expect(after.get(id)! - before.get(id)!).toBe(units.get(id) ?? 0);
  });

  describe('takeUnits', () => {
    const quota = async (id: number, limit: number, used: number) =>
      gw.app.store.db
        .updateTable('devices')
        .set({ quota_limit: limit, quote_used: used })
        .where('id', '=', id)
        .execute();
    const used = async (id: number) =>
      (await gw.app.store.db.selectFrom('devices').select('quote_used').where('id', '=', id).executeTakeFirstOrThrow())
        .quote_used;

    it('gives each device what it wants or what is left, and counts exactly that', async () => {
      const [plenty, short, full, unlimited, over] = ids.slice(300, 305) as [number, number, number, number, number];
      await quota(plenty, 10, 2);
      await quota(short, 10, 7);
      await quota(full, 10, 10);
      await quota(unlimited, -1, 5);
      // Used past the limit (the limit lowered since): nothing left, and nothing given back.
      await quota(over, 10, 12);
      const wanted = new Map([
        [plenty, 4],
        [short, 5],
        [full, 1],
        [unlimited, 9],
        [over, 2],
        [ids.at(-1)! + 1_000_000, 3],
      ]);
      const granted = await gw.app.store.db.transaction().execute((trx) => quotaRepository.takeUnits(trx, wanted));
      expect(Object.fromEntries(granted)).toEqual({
        [plenty]: 4,
        [short]: 3,
        [full]: 0,
        [unlimited]: 9,
        [over]: 0,
      });
      expect([
        await used(plenty),
        await used(short),
        await used(full),
        await used(unlimited),
        await used(over),
      ]).toEqual([6, 10, 10, 14, 12]);
    });

    it('takes exactly what is left when batches take from one device at once', async () => {
      const device = ids[310]!;
      await quota(device, 50, 0);
      const take = () =>
        gw.app.store.db.transaction().execute((trx) => quotaRepository.takeUnits(trx, new Map([[device, 30]])));
      const answers = await Promise.all([take(), take(), take()]);
      expect(answers.map((granted) => granted.get(device)).sort()).toEqual([0, 20, 30]);
      expect(await used(device)).toBe(50);
    });

    it('gives back each device its own units, never below zero, in one statement', async () => {
      const [a, b, c] = ids.slice(320, 323) as [number, number, number];
      await quota(a, 10, 5);
      await quota(b, 10, 1);
      await quota(c, 10, 0);
      await gw.app.store.db.transaction().execute((trx) =>
        quotaRepository.giveBackMany(
          trx,
          new Map([
            [c, 2],
            [b, 3],
            [a, 2],
          ]),
        ),
      );
      expect([await used(a), await used(b), await used(c)]).toEqual([3, 0, 0]);
    });

    it('gives back and takes for the same devices at once, in opposite orders, without a deadlock', async () => {
      const many = ids.slice(330, 350);
      for (const id of many) await quota(id, 1000, 500);
      const rounds = 20;
      const jobs: Array<Promise<unknown>> = [];
      for (let i = 0; i < rounds; i++) {
        const up = new Map(many.map((id) => [id, 1] as const));
        const down = new Map([...many].reverse().map((id) => [id, 1] as const));
        jobs.push(gw.app.store.db.transaction().execute((trx) => quotaRepository.takeUnits(trx, up)));
        jobs.push(gw.app.store.db.transaction().execute((trx) => quotaRepository.giveBackMany(trx, down)));
      }
      // A deadlock would fail one of them (PostgreSQL aborts one side of it).
      await Promise.all(jobs);
      for (const id of many) expect(await used(id)).toBe(500);
    });
  });
});
