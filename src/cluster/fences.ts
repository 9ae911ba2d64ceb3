/**
 * The fence of every write made for a device (docs/internals.md, Clusters, PostgreSQL): a write carries
 * the lease epoch it was made under, and is refused when the epoch moved on (another node took the
 * device over), which also drops the device from this node at once.
 *
 * Owns: checking (and locking) a device's lease row in the writing transaction, each lease once per
 * transaction (a group commit of many outcomes checks it once); which device a network session belongs to.
 * Must never: let a write through whose epoch is no longer this node's, drop a device itself (it tells
 * the node, which does), or decide which devices this node holds.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Db } from '../store/schema.js';
import { LeaseLostError, leaseKey } from './holdings.js';
import { clusterRepository } from './repository.js';

/** What the fences need of the node they guard. */
export interface FencedNode {
  /** This node's name (the lease holder a fence checks for). */
  readonly node: string;
  readonly logger: FastifyBaseLogger;
  /** The epoch this node holds the device under now, or null. */
  epochOf(deviceId: number): number | null;
  /** A write for the device under `epoch` was refused: the node drops it (if still held under that epoch). */
  lost(deviceId: number, epoch: number): void;
}

const REFUSED = 'a write for a device was refused: its lease moved to another node';

export class LeaseFences {
  /** Leases already fenced in a transaction, by transaction. */
  private readonly fenced = new WeakMap<Db, Set<string>>();
  /** The device of each network session seen (sessions never move between devices). */
  private readonly sessions = new Map<string, number>();

  constructor(private readonly here: FencedNode) {}

  async fence(db: Db, deviceId: number, epoch: number): Promise<void> {
    // Within one transaction (a group commit of many outcomes) each lease is checked, and locked, once.
    const checked = db.isTransaction ? this.fenced.get(db) : undefined;
    const key = leaseKey(deviceId, epoch);
    if (checked?.has(key) === true) return;
    if (await clusterRepository.fence(db, { deviceId, name: this.here.node, epoch })) {
      if (db.isTransaction) {
        if (checked === undefined) this.fenced.set(db, new Set([key]));
        else checked.add(key);
      }
      return;
    }
    this.here.logger.warn({ deviceId, epoch }, REFUSED);
    this.here.lost(deviceId, epoch);
    throw new LeaseLostError(deviceId, epoch);
  }

  async fenceAll(db: Db, leases: ReadonlyArray<{ deviceId: number; epoch: number }>): Promise<Set<string>> {
    const checked = db.isTransaction ? this.fenced.get(db) : undefined;
    const asked = new Map<string, { deviceId: number; epoch: number }>();
    for (const lease of leases) {
      const key = leaseKey(lease.deviceId, lease.epoch);
      if (checked?.has(key) !== true) asked.set(key, lease);
    }
    const refused = new Set<string>();
    if (asked.size === 0) return refused;
    const pairs = [...asked.values()];
    const held = await clusterRepository.fenceAll(db, {
      deviceIds: pairs.map((lease) => lease.deviceId),
      epochs: pairs.map((lease) => lease.epoch),
      name: this.here.node,
    });
    const heldKeys = new Set(held.map((lease) => leaseKey(lease.deviceId, lease.epoch)));
    for (const [key, { deviceId, epoch }] of asked) {
      if (heldKeys.has(key)) {
        if (db.isTransaction) {
          const set = this.fenced.get(db) ?? new Set<string>();
          set.add(key);
          this.fenced.set(db, set);
        }
        continue;
      }
      refused.add(key);
      this.here.logger.warn({ deviceId, epoch }, REFUSED);
      this.here.lost(deviceId, epoch);
    }
    return refused;
  }

  /** Network-state writes name a session; the device holding it is fenced (none: a pairing attempt, not fenced). */
  async fenceSession(db: Db, session: string): Promise<boolean> {
    let deviceId = this.sessions.get(session);
    if (deviceId === undefined) {
      const found = await clusterRepository.deviceOfSession(db, session);
      if (found === null) return true;
      deviceId = found;
      this.sessions.set(session, found);
    }
    const epoch = this.here.epochOf(deviceId);
    if (epoch === null) return false;
    try {
      await this.fence(db, deviceId, epoch);
      return true;
    } catch (error) {
      if (error instanceof LeaseLostError) return false;
      throw error;
    }
  }
}
