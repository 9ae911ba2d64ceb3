// src/devices/directory.ts over the real store (both dialects): looking a sending device up by its number. Look-ups
// that miss the cache within one turn of the event loop share one read; each gets its own account's device, a
// device created for a number is found by it before it pairs, a deleted one is not, and a miss is never cached.
import Database from 'better-sqlite3';
import { CompiledQuery } from 'kysely';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { DeviceDirectory } from '../../src/devices/directory.js';
import { devicesRepository } from '../../src/devices/repository.js';
import { noStoreAvailable, startGateway, storeKind, type TestGateway } from '../helpers/gateway.js';
import { deviceRow } from '../helpers/rows.js';

describe.skipIf(noStoreAvailable)('the device directory', () => {
  let gw: TestGateway;
  let other: number;
  const PHONE = '6281999990701';
  const SHARED = '6281999990702';

  beforeAll(async () => {
    gw = await startGateway();
    await gw.app.services.accounts.setMaxDevices('default', 10);
    const now = Date.now();
    other = Number(
      (
        await gw.app.store.db
          .insertInto('accounts')
          .values({ name: 'other', max_devices: 10, created_at: now, updated_at: now })
          .returning('id')
          .executeTakeFirstOrThrow()
      ).id,
    );
  });
  afterAll(() => gw?.close());
  afterEach(() => vi.restoreAllMocks());

  async function create(name: string, phone: string): Promise<number> {
    const created = await gw.request('POST', '/devices', { package: 'BETA', name, phone });
    expect(created.status).toBe(201);
    return created.body.data.id;
  }

  /** Asks from separate callbacks of one turn, as requests read together would. */
  function askTogether<T>(asks: Array<() => Promise<T>>): Promise<T[]> {
    return new Promise((resolve) => {
      const pending: Array<Promise<T>> = [];
      asks.forEach((ask, i) =>
        setImmediate(() => {
          pending.push(ask());
          if (i === asks.length - 1) resolve(Promise.all(pending));
        }),
      );
    });
  }

  it('look-ups of one turn share one read; each its own account, by expected number before pairing', async () => {
    const mine = await create('mine', PHONE);
    const shared = await create('shared', SHARED);
    // The other account's device with the same number is paired under it (phone set, expected number none).
    const theirs = Number(
      (
        await gw.app.store.db
          .insertInto('devices')
          .values(deviceRow(other, { name: 'theirs', phone: SHARED, paired_status: 'PAIRED' }))
          .returning('id')
          .executeTakeFirstOrThrow()
      ).id,
    );
    const directory = new DeviceDirectory(gw.app.store);
    const gathered = vi.spyOn(devicesRepository, 'findByPhones');
    const found = await askTogether([
      () => directory.findByPhone(1, PHONE),
      () => directory.findByPhone(1, SHARED),
      () => directory.findByPhone(other, SHARED),
      () => directory.findByPhone(other, PHONE),
      () => directory.findByPhone(1, '6281999990799'),
    ]);
    expect(gathered).toHaveBeenCalledTimes(1);
    expect(found.map((row) => row?.id)).toEqual([mine, shared, theirs, undefined, undefined]);
    // Whole rows, as the one-pair read gives them.
    expect(found[2]).toEqual(await devicesRepository.findByPhone(gw.app.store.db, other, SHARED));
  });

  it('a miss is not cached, and a deleted device is not found', async () => {
    const directory = new DeviceDirectory(gw.app.store);
    const phone = '6281999990703';
    expect(await directory.findByPhone(1, phone)).toBeUndefined();
    const id = await create('late', phone);
    expect((await directory.findByPhone(1, phone))?.id).toBe(id);
    expect((await gw.request('DELETE', `/devices/${id}`)).status).toBe(200);
    directory.invalidate();
    expect(await directory.findByPhone(1, phone)).toBeUndefined();
  });

  it('a failed read fails the look-ups in it; the next one reads again', async () => {
    const directory = new DeviceDirectory(gw.app.store);
    vi.spyOn(devicesRepository, 'findByPhones').mockRejectedValueOnce(new Error('store down'));
    await expect(directory.findByPhone(1, PHONE)).rejects.toThrow('store down');
    expect((await directory.findByPhone(1, PHONE))?.name).toBe('mine');
  });

  // An `or` of the paired number and the expected one was read by walking every device of the account (a look-up
  // per send: 137 µs at 1,000 devices). Each of the two is a range of (account, phone).
  it.skipIf(storeKind !== 'sqlite')(
    'on SQLite a look-up reads the number through the index, not the account',
    async () => {
      // The statements as they run (prepared earlier or not), read from better-sqlite3's statements.
      const probe = new Database(':memory:');
      const statement = Object.getPrototypeOf(probe.prepare('select 1')) as { all(...args: unknown[]): unknown };
      probe.close();
      const ran: string[] = [];
      const all = statement.all;
      vi.spyOn(statement, 'all').mockImplementation(function (this: { source: string }, ...args: unknown[]) {
        ran.push(this.source);
        return all.apply(this, args);
      });
      await devicesRepository.findByPhone(gw.app.store.db, 1, '6281999990704');
      const text = ran.find((sql) => sql.includes('expected_phone'));
      expect(text).toBeDefined();
      const parameters = Array.from({ length: (text!.match(/\?/g) ?? []).length }, () => 1);
      const plan = await gw.app.store.db.executeQuery<{ detail: string }>(
        CompiledQuery.raw(`explain query plan ${text!}`, parameters),
      );
      const steps = plan.rows.map((row) => row.detail);
      const reads = steps.filter((step) => /^(SEARCH|SCAN) devices/.test(step));
      expect(reads.length, steps.join('; ')).toBeGreaterThan(0);
      for (const step of reads)
        expect(step, steps.join('; ')).toContain('devices_account_phone (account_id=? AND phone=?)');
    },
  );
});
