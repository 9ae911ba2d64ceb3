// Device leases between nodes on one PostgreSQL store (docs/internals.md, Clusters), driven
// round by round with a clock the test moves: claims spread evenly, a node's
// own clock stops it at the end of its lease, a takeover moves the epoch on
// and every write made under the old epoch is refused (and drops the device
// there), a fenced write and a takeover never interleave, a clean stop hands
// everything over at once, and a second process under the same name takes it
// over. PostgreSQL only: with SQLite there is one node and no lease.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import pino from 'pino';
import type { FastifyBaseLogger } from 'fastify';
import { ManualClock } from '../../src/clock.js';
import { ClusterNode } from '../../src/cluster/node.js';
import { LeaseLostError } from '../../src/cluster/holdings.js';
import { FencedWrites } from '../../src/cluster/fenced-writes.js';
import { clusterRepository } from '../../src/cluster/repository.js';
import { messagesRepository } from '../../src/messages/repository.js';
import { Committer } from '../../src/store/batcher.js';
import { SqlNetworkStateStore } from '../../src/devices/network-state.js';
import { StaleNetworkStateError } from '../../src/network/state.js';
import { openStore, type Store } from '../../src/store/store.js';
import { newStoreLocation, noStoreAvailable, storeKind, type StoreLocation } from '../helpers/gateway.js';
import { deviceRow } from '../helpers/rows.js';

const logger = pino({ level: 'silent' }) as unknown as FastifyBaseLogger;
const LEASE_MS = 15_000;

describe.skipIf(storeKind !== 'postgres' || noStoreAvailable)('device leases', () => {
  let location: StoreLocation;
  let store: Store;
  let clock: ManualClock;
  const nodes: ClusterNode[] = [];

  beforeEach(async () => {
    location = await newStoreLocation();
    store = openStore({ databaseUrl: location.databaseUrl, dataDir: location.dataDir });
    await store.migrate();
    clock = new ManualClock(Date.UTC(2026, 0, 1));
  });
  afterEach(async () => {
    await Promise.all(nodes.splice(0).map((node) => node.close()));
    await store.close();
    await location.drop();
  });

  /** A node driven by hand: its own timer would not run within a test (a heartbeat an hour apart). */
  async function node(name: string, options: { maxReleases?: number } = {}): Promise<ClusterNode> {
    const created = new ClusterNode({
      store,
      name,
      url: `http://127.0.0.1:1/${name}`,
      clock,
      logger,
      publish: async () => undefined,
      devicesWithWork: (ids) => messagesRepository.devicesWithPending(store.db, ids),
      heartbeatMs: 3_600_000,
      leaseMs: LEASE_MS,
      marginMs: 1_000,
      ...options,
    });
    nodes.push(created);
    await created.start();
    await created.roundNow();
    return created;
  }

  /** Paired, active devices with sessions: the ones that need a connection. */
  async function devices(count: number, paired = true): Promise<number[]> {
    const now = clock.now();
    const account = await store.db
      .insertInto('accounts')
      .values({ name: `acc-${Math.random()}`, max_devices: 1000, created_at: now, updated_at: now })
      .returning('id')
      .executeTakeFirstOrThrow();
    const rows = await store.db
      .insertInto('devices')
      .values(
        Array.from({ length: count }, (_, i) =>
          deviceRow(account.id, {
            name: `d${i}`,
            phone: paired ? `62811000${String(i).padStart(4, '0')}` : null,
            paired_status: paired ? 'PAIRED' : 'UNPAIRED',
            network_session: paired ? `session-${account.id}-${i}` : null,
            created_at: now,
            updated_at: now,
          }),
        ),
      )
      .returning('id')
      .execute();
    return rows.map((row) => Number(row.id));
  }

  function heldBy(n: ClusterNode, ids: readonly number[]): number[] {
    return ids.filter((id) => n.epochOf(id) !== null);
  }

  async function leaseOf(deviceId: number) {
    return store.db
      .selectFrom('device_leases')
      .select(['node', 'epoch'])
      .where('device_id', '=', deviceId)
      .executeTakeFirstOrThrow();
  }

  it('one node takes every device; a joining node gets its share as the first hands back a few a round', async () => {
    const ids = await devices(10);
    const a = await node('a', { maxReleases: 2 });
    expect(heldBy(a, ids)).toHaveLength(10);
    const b = await node('b', { maxReleases: 2 });
    // A holds them under a live heartbeat: nothing is free for B yet.
    expect(heldBy(b, ids)).toHaveLength(0);
    const counts: Array<[number, number]> = [];
    for (let round = 0; round < 4; round++) {
      await a.roundNow();
      await b.roundNow();
      counts.push([heldBy(a, ids).length, heldBy(b, ids).length]);
    }
    expect(counts).toEqual([
      [8, 2],
      [6, 4],
      [5, 5],
      [5, 5],
    ]);
    // Never both: every device has exactly one holder.
    for (const id of ids) expect(Number(a.epochOf(id) !== null) + Number(b.epochOf(id) !== null)).toBe(1);
  });

  it('a node stops acting at the end of its own lease; another takes over with a new epoch; stale writes are refused', async () => {
    const [id] = await devices(1);
    const a = await node('a');
    const lost: number[] = [];
    a.subscribe({ lost: (deviceId) => void lost.push(deviceId) });
    const before = a.epochOf(id!);
    expect(before).not.toBeNull();

    // A is silent (frozen, or cut off from the store) past its lease: its own clock says stop.
    clock.advance(LEASE_MS - 1_000);
    expect(a.epochOf(id!)).toBeNull();
    const b = await node('b');
    // Not yet: A's heartbeat is not older than the lease in the store.
    expect(b.epochOf(id!)).toBeNull();
    clock.advance(1_001);
    await b.roundNow();
    expect(b.epochOf(id!)).toBe(before! + 1);
    expect(await leaseOf(id!)).toEqual({ node: 'b', epoch: before! + 1 });

    // A write A made under its old epoch commits nothing, and A drops the device at once.
    const write = store.db.transaction().execute(async (trx) => {
      await trx.updateTable('devices').set({ connected: 1, server_name: 'a' }).where('id', '=', id!).execute();
      await a.fence(trx, id!, before!);
    });
    await expect(write).rejects.toBeInstanceOf(LeaseLostError);
    const row = await store.db
      .selectFrom('devices')
      .select(['connected', 'server_name'])
      .where('id', '=', id!)
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ connected: 0, server_name: null });
    expect(lost).toEqual([id]);

    // A comes back: its heartbeat renews, but the device stays B's.
    await a.roundNow();
    expect(a.epochOf(id!)).toBeNull();
    expect(b.epochOf(id!)).toBe(before! + 1);
  });

  it('the writes of one group commit are fenced in one statement: exactly the devices taken over are refused', async () => {
    const ids = await devices(4);
    const a = await node('a', { maxReleases: 2 });
    const epochs = ids.map((id) => a.epochOf(id)!);
    // B joins; A hands two devices back, B takes them with a new epoch.
    const b = await node('b', { maxReleases: 2 });
    await a.roundNow();
    await b.roundNow();
    const moved = ids.filter((id) => b.epochOf(id) !== null);
    expect(moved).toHaveLength(2);

    const fenceAll = vi.spyOn(clusterRepository, 'fenceAll');
    const fenceOne = vi.spyOn(clusterRepository, 'fence');
    const writes = new FencedWrites(new Committer(store.db), a);
    // All four were made under A's epochs, in one commit (issued in the same turn of the event loop).
    const outcomes = await Promise.allSettled(
      ids.map((id, i) =>
        writes.run(id, epochs[i]!, async (trx) => {
          // A fence asked again inside the write costs nothing more: the batch fenced it.
          await a.fence(trx, id, epochs[i]!);
          await trx.updateTable('devices').set({ name: 'written by a' }).where('id', '=', id).execute();
          return id;
        }),
      ),
    );
    expect(fenceAll).toHaveBeenCalledTimes(1);
    expect(fenceOne).not.toHaveBeenCalled();
    fenceAll.mockRestore();
    fenceOne.mockRestore();
    outcomes.forEach((outcome, i) => {
      if (moved.includes(ids[i]!)) {
        expect(outcome.status).toBe('rejected');
        expect((outcome as PromiseRejectedResult).reason).toBeInstanceOf(LeaseLostError);
      } else {
        expect(outcome).toEqual({ status: 'fulfilled', value: ids[i] });
      }
    });
    const names = await store.db.selectFrom('devices').select(['id', 'name']).where('id', 'in', ids).execute();
    for (const row of names) {
      expect(row.name).toBe(moved.includes(Number(row.id)) ? `d${ids.indexOf(Number(row.id))}` : 'written by a');
    }

    // A stale epoch of a device A still holds is refused too, beside a write under the current one.
    const kept = ids.find((id) => !moved.includes(id))!;
    const current = a.epochOf(kept)!;
    const [stale, fresh] = await Promise.allSettled([
      writes.run(kept, current - 1, async () => 'stale'),
      writes.run(kept, current, async () => 'current'),
    ]);
    expect(stale.status).toBe('rejected');
    expect(fresh).toEqual({ status: 'fulfilled', value: 'current' });
  });

  it('a lease that ran out here but that nobody took is held again after the next heartbeat', async () => {
    const [id] = await devices(1);
    const a = await node('a');
    const epoch = a.epochOf(id!);
    const acquired: number[] = [];
    a.subscribe({ acquired: (deviceId) => void acquired.push(deviceId) });
    clock.advance(LEASE_MS);
    expect(a.epochOf(id!)).toBeNull();
    await a.roundNow();
    expect(a.epochOf(id!)).toBe(epoch);
    // Told again, so its connection is opened again.
    expect(acquired).toEqual([id]);
  });

  it('a fenced write and a takeover never interleave: the claim skips a lease share-locked by a write in flight', async () => {
    const [id] = await devices(1);
    const a = await node('a');
    const epoch = a.epochOf(id!)!;
    const b = await node('b');
    expect(b.epochOf(id!)).toBeNull();
    // A is silent past its lease: the device may be taken over from now on.
    clock.advance(LEASE_MS + 1);
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let fenced!: () => void;
    const inside = new Promise<void>((resolve) => (fenced = resolve));
    // A's write passed its fence (the lease was still A's) and has not committed yet.
    const write = store.db.transaction().execute(async (trx) => {
      await a.fence(trx, id!, epoch);
      fenced();
      await held;
      await trx.updateTable('devices').set({ connected: 1 }).where('id', '=', id!).execute();
    });
    await inside;
    await b.roundNow();
    expect(b.epochOf(id!)).toBeNull();
    release();
    await write;
    await b.roundNow();
    expect(b.epochOf(id!)).toBe(epoch + 1);
  });

  it('a clean stop hands every device over at once, without waiting for the lease', async () => {
    const ids = await devices(4);
    const a = await node('a');
    const b = await node('b');
    await a.roundNow();
    await b.roundNow();
    expect(heldBy(a, ids).length + heldBy(b, ids).length).toBe(4);
    await a.close();
    await b.roundNow();
    expect(heldBy(b, ids)).toHaveLength(4);
    const nodesRows = await store.db
      .selectFrom('cluster_nodes')
      .select(['name', 'stopped_at'])
      .orderBy('name')
      .execute();
    expect(nodesRows.map((r) => [r.name, r.stopped_at !== null])).toEqual([
      ['a', true],
      ['b', false],
    ]);
  });

  it('a pairing attempt takes a free device; a live holder keeps it', async () => {
    const [id] = await devices(1, false);
    const a = await node('a');
    const b = await node('b');
    // Needs no connection: no round claims it.
    expect(a.epochOf(id!)).toBeNull();
    const epoch = await a.claimForPairing(id!);
    expect(epoch).toBe(1);
    expect(await b.claimForPairing(id!)).toBeNull();
    // A's rounds keep it while the attempt runs.
    await a.roundNow();
    expect(a.epochOf(id!)).toBe(1);
    a.letGo(id!);
    await a.roundNow();
    expect(await b.claimForPairing(id!)).toBe(2);
  });

  it('a release that lands after the device was claimed again leaves the newer lease', async () => {
    // A pairing attempt ends (its lease is let go, the release sent without waiting) and the next QR request claims
    // the device again at once: on a busy pool the release can run second. It names the claim it ends.
    const [id] = await devices(1, false);
    const a = await node('a');
    const first = await a.claimForPairing(id!);
    a.letGo(id!);
    await a.roundNow();
    const second = await a.claimForPairing(id!);
    expect(second).toBe(first! + 1);
    expect(await clusterRepository.release(store.db, 'a', [{ deviceId: id!, epoch: first! }])).toBe(0);
    expect(await leaseOf(id!)).toMatchObject({ node: 'a', epoch: second });
    // A write under the newer claim still passes its fence.
    await store.db.transaction().execute((trx) => a.fence(trx, id!, second!));
    expect(await clusterRepository.release(store.db, 'a', [{ deviceId: id!, epoch: second! }])).toBe(1);
    expect(await leaseOf(id!)).toMatchObject({ node: null, epoch: second });
  });

  it('network-state writes of a device taken over are refused', async () => {
    const [id] = await devices(1);
    const a = await node('a');
    const session = (
      await store.db.selectFrom('devices').select('network_session').where('id', '=', id!).executeTakeFirstOrThrow()
    ).network_session!;
    const states = new SqlNetworkStateStore(store, clock, (db, s) => a.fenceSession(db, s));
    const writer = (await states.claim(session, { create: true }))!;
    await writer.write({ creds: Buffer.of(1) });
    clock.advance(LEASE_MS + 1);
    const b = await node('b');
    expect(b.epochOf(id!)).not.toBeNull();
    await expect(writer.write({ creds: Buffer.of(2) })).rejects.toBeInstanceOf(StaleNetworkStateError);
    await expect(writer.recordSent('m1', Buffer.of(3), clock.now())).rejects.toBeInstanceOf(StaleNetworkStateError);
    expect(await writer.readCreds()).toEqual(Buffer.of(1));
  });

  it('a second process under the same name takes the name over; the first holds nothing from then on', async () => {
    const ids = await devices(3);
    const first = await node('a');
    expect(heldBy(first, ids)).toHaveLength(3);
    const epochs = ids.map((id) => first.epochOf(id)!);
    const second = await node('a');
    // Its leftovers were freed and claimed again: every epoch moved on.
    expect(ids.map((id) => second.epochOf(id))).toEqual(epochs.map((e) => e + 1));
    await first.roundNow();
    expect(heldBy(first, ids)).toHaveLength(0);
  });
});
