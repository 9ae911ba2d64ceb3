/**
 * The devices this node holds, as it last knew them (docs/internals.md, Clusters, PostgreSQL), and the
 * listeners told when that changes (the connection manager, the dispatcher).
 *
 * Owns: the local ledger of held devices (epoch, when it was taken, whether for a pairing attempt);
 * making it match the leases a heartbeat read back (reconcile); telling listeners a device was acquired,
 * lost, changed, or has work, and waiting until they stopped using a lost one.
 * Must never: read or write the store (the node does, and hands this what it read), judge whether this
 * node's own lease is still valid (the node does), or forget a device before its listeners were told.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { HoldingsListener, LossCause } from './holdings.js';
import type { HeldLease, LeaseRef } from './repository.js';

interface Holding {
  epoch: number;
  /** Which round of this node's bookkeeping took it (a heartbeat read before it cannot know of it). */
  since: number;
  /** Held for a pairing attempt (the device needs no connection yet): not counted in the share. */
  pairing: boolean;
}

export class HeldDevices {
  private readonly held = new Map<number, Holding>();
  /** Counts acquisitions; a heartbeat's view of the leases is compared only with holdings older than it. */
  private seq = 0;
  private readonly listeners = new Set<HoldingsListener>();
  /**
   * Devices dropped because this node's lease ran out, until the next heartbeat says which are still ours:
   * the others are told lost once more, without the cause, so nothing here waits to reconnect them.
   */
  private readonly expiredHere = new Set<number>();

  constructor(private readonly logger: FastifyBaseLogger) {}

  subscribe(listener: HoldingsListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  get hasListeners(): boolean {
    return this.listeners.size > 0;
  }

  get size(): number {
    return this.held.size;
  }

  /** The mark of the ledger now: holdings taken after it are newer than a heartbeat read after it. */
  mark(): number {
    return this.seq;
  }

  epochOf(deviceId: number): number | null {
    return this.held.get(deviceId)?.epoch ?? null;
  }

  ids(): number[] {
    return [...this.held.keys()];
  }

  has(deviceId: number): boolean {
    return this.held.has(deviceId);
  }

  /** Devices held for a connection (pairing attempts are not counted in the share). */
  counted(): number {
    return [...this.held.values()].filter((h) => !h.pairing).length;
  }

  /** Held from now on, for a connection: listeners are told. */
  acquire(deviceId: number, epoch: number): void {
    this.held.set(deviceId, { epoch, pairing: false, since: ++this.seq });
    for (const listener of this.listeners) listener.acquired?.(deviceId, epoch);
  }

  /** Held from now on, for a pairing attempt (whoever asked drives it; listeners are not told). */
  holdForPairing(deviceId: number, epoch: number): void {
    this.held.set(deviceId, { epoch, pairing: true, since: ++this.seq });
  }

  /** Forgotten without telling anyone (the caller stopped using it); the lease it was held under, if it was. */
  forget(deviceId: number): LeaseRef | null {
    const holding = this.held.get(deviceId);
    if (holding === undefined) return null;
    this.held.delete(deviceId);
    return { deviceId, epoch: holding.epoch };
  }

  /** The device is gone from here (taken over, or a write was refused), if still held under `epoch`. */
  async lose(deviceId: number, epoch: number): Promise<void> {
    const holding = this.held.get(deviceId);
    if (holding === undefined || holding.epoch !== epoch) return;
    this.held.delete(deviceId);
    await this.tell(deviceId);
  }

  /** Every device is dropped; listeners are told, with the cause. */
  async dropAll(cause?: LossCause): Promise<void> {
    const devices = [...this.held.keys()];
    this.held.clear();
    await Promise.allSettled(devices.map((deviceId) => this.tell(deviceId, cause)));
  }

  /** This node's lease ran out: every device is dropped, and told lost again later unless a heartbeat keeps it. */
  async expireAll(): Promise<void> {
    for (const deviceId of this.held.keys()) this.expiredHere.add(deviceId);
    await this.dropAll('expired');
  }

  /** Forgets every device without telling (the node handed them all back in the store). */
  clear(): void {
    this.held.clear();
  }

  /**
   * Makes the ledger match the leases a heartbeat read back (`before`: the mark taken before it was read).
   * Devices no longer needed are told lost and passed to `release`, which hands their leases back.
   */
  async reconcile(
    leases: readonly HeldLease[],
    before: number,
    release: (leases: readonly LeaseRef[]) => Promise<void>,
  ): Promise<void> {
    const inStore = new Map(leases.map((lease) => [lease.deviceId, lease]));
    const lost: number[] = [];
    for (const [deviceId, holding] of this.held) {
      // Taken while the heartbeat ran (a pairing attempt): the heartbeat's view is older than it.
      if (holding.since > before) continue;
      const lease = inStore.get(deviceId);
      if (lease === undefined || lease.epoch !== holding.epoch) lost.push(deviceId);
    }
    if (lost.length > 0) {
      this.logger.warn({ devices: lost.length }, 'devices were taken over by other nodes; dropped here');
      for (const deviceId of lost) await this.lose(deviceId, this.held.get(deviceId)!.epoch);
    }
    const unwanted: LeaseRef[] = [];
    for (const lease of leases) {
      const holding = this.held.get(lease.deviceId);
      if (holding !== undefined && holding.since > before) continue;
      if (holding === undefined) {
        // Still ours in the store (the lease ran out here but nobody took it): held again.
        if (lease.wanted) this.acquire(lease.deviceId, lease.epoch);
        else unwanted.push({ deviceId: lease.deviceId, epoch: lease.epoch });
      } else if (lease.wanted) {
        holding.pairing = false;
      } else if (!holding.pairing) {
        // Suspended, deleted or logged out meanwhile: its connection ends and the lease goes.
        unwanted.push({ deviceId: lease.deviceId, epoch: lease.epoch });
      }
    }
    if (unwanted.length > 0) {
      for (const { deviceId } of unwanted) {
        if (this.held.delete(deviceId)) await this.tell(deviceId);
      }
      await release(unwanted);
    }
    // Dropped when the lease ran out and not held again: another node has them now (or nobody needs them).
    for (const deviceId of this.expiredHere) {
      if (!this.held.has(deviceId)) await this.tell(deviceId);
    }
    this.expiredHere.clear();
  }

  /** Takes `count` devices held for a connection out of the ledger, each told lost and stopped; answers their leases. */
  async handBack(count: number): Promise<LeaseRef[]> {
    const chosen = [...this.held].filter(([, h]) => !h.pairing).slice(-count);
    for (const [deviceId] of chosen) {
      this.held.delete(deviceId);
      await this.tell(deviceId);
    }
    return chosen.map(([deviceId, holding]) => ({ deviceId, epoch: holding.epoch }));
  }

  /** Another node changed a device held here. */
  changed(deviceId: number): void {
    for (const listener of this.listeners) listener.changed?.(deviceId);
  }

  /** Devices held here have new work. */
  work(deviceIds: readonly number[]): void {
    for (const listener of this.listeners) listener.work?.(deviceIds);
  }

  /** Tells every listener the device is no longer held here, and waits until they stopped using it. */
  private async tell(deviceId: number, cause?: LossCause): Promise<void> {
    await Promise.allSettled([...this.listeners].map((listener) => listener.lost?.(deviceId, cause)));
  }
}
