/**
 * This process as a node of the cluster (docs/internals.md, Clusters, PostgreSQL): its
 * heartbeat, the device leases it holds, claiming and handing back devices,
 * and the fence of every write made for a device.
 *
 * One loop, one round at a time: renew the heartbeat (which renews every lease
 * of the node at once) and read back which leases are still ours; forget the
 * ones taken over, let go of devices that need no connection any more; then
 * claim free or orphaned devices up to a fair share, or hand back a few above
 * it. Rounds run every heartbeat interval and when woken (a node released
 * devices, a device changed).
 *
 * Safety: this node acts for a device only while its own clock says the lease
 * it last renewed is valid (renewal time + lease - margin). Other nodes take a
 * lease over only once this node's heartbeat is older than the lease, so a
 * node that is paused or cut off from the store has stopped before anyone
 * else starts. A write made for a device carries the epoch it was held under
 * and is refused when the epoch moved on (fence), which also drops the device
 * here at once.
 *
 * Must never: call into the dispatcher or the connection manager (they
 * subscribe), or hand a device back before its listeners have stopped using it.
 */
import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../clock.js';
import type { Store } from '../store/store.js';
import type { Db } from '../store/schema.js';
import { messagesRepository } from '../messages/repository.js';
import { balance } from './balance.js';
import { LeaseLostError, leaseKey, type DeviceHoldings, type HoldingsListener, type LossCause } from './holdings.js';
import { clusterRepository, type HeldLease, type Placement } from './repository.js';

export interface ClusterTimings {
  /** Heartbeat (and lease renewal) interval. */
  readonly heartbeatMs?: number;
  /** A node silent this long is DOWN and its leases may be taken over. */
  readonly leaseMs?: number;
  /** A node stops acting this long before its own lease runs out, for clock and scheduling slack. */
  readonly marginMs?: number;
  /** Devices claimed in one statement at most. */
  readonly claimBatch?: number;
  /** Devices handed back in one round at most, when above the fair share. */
  readonly maxReleases?: number;
}

export interface ClusterNodeOptions extends ClusterTimings {
  readonly store: Store;
  readonly name: string;
  /** Where other nodes reach this one's HTTP API. */
  readonly url: string;
  readonly clock: Clock;
  readonly logger: FastifyBaseLogger;
  /** Tells other nodes something changed ('l': leases freed; 'd:ID': a device changed). */
  readonly publish: (message: string) => Promise<void>;
}

interface Holding {
  epoch: number;
  /** Which round of this node's bookkeeping took it (a heartbeat read before it cannot know of it). */
  since: number;
  /** Held for a pairing attempt (the device needs no connection yet): not counted in the share. */
  pairing: boolean;
}

/** How a request for a device is routed. */
export type Route =
  | { readonly kind: 'here' }
  | { readonly kind: 'forward'; readonly node: string; readonly url: string }
  | { readonly kind: 'unavailable' };

export class ClusterNode implements DeviceHoldings {
  readonly clustered = true;
  readonly node: string;
  /** This process; a restart under the same name takes the name over with a new instance. */
  readonly instance = randomUUID();
  private readonly held = new Map<number, Holding>();
  /** Counts acquisitions; a heartbeat's view of the leases is compared only with holdings older than it. */
  private seq = 0;
  private readonly listeners = new Set<HoldingsListener>();
  /**
   * Devices dropped because this node's lease ran out, until the next heartbeat says which are still ours:
   * the others are told lost once more, without the cause, so nothing here waits to reconnect them.
   */
  private readonly expiredHere = new Set<number>();
  /** Clock time the last successful heartbeat was stamped with. */
  private renewedAt = -Infinity;
  private timer: NodeJS.Timeout | null = null;
  private expiryTimer: NodeJS.Timeout | null = null;
  private round: Promise<void> | null = null;
  private again = false;
  private started = false;
  private closed = false;
  private readonly sessions = new Map<string, number>();
  /** Nodes alive as of the last round (the device's `server.status`). */
  private liveNodes = new Set<string>();
  /** Leases already fenced in a transaction, by transaction. */
  private readonly fenced = new WeakMap<Db, Set<string>>();
  readonly heartbeatMs: number;
  readonly leaseMs: number;
  private readonly marginMs: number;
  private readonly claimBatch: number;
  private readonly maxReleases: number;

  constructor(private readonly options: ClusterNodeOptions) {
    this.node = options.name;
    this.heartbeatMs = options.heartbeatMs ?? 5_000;
    this.leaseMs = options.leaseMs ?? 15_000;
    this.marginMs = options.marginMs ?? 1_000;
    this.claimBatch = options.claimBatch ?? 100;
    this.maxReleases = options.maxReleases ?? 16;
  }

  /** Announces the node; leases left under its name by an earlier process are freed (their epochs move on). */
  async start(): Promise<void> {
    const { store, clock } = this.options;
    const now = clock.now();
    await store.db.transaction().execute(async (trx) => {
      await clusterRepository.announce(trx, { name: this.node, instance: this.instance, url: this.options.url, now });
      await clusterRepository.release(trx, this.node);
    });
    this.renewedAt = now;
    this.started = true;
    this.wake();
  }

  subscribe(listener: HoldingsListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Whether this node's own clock still trusts the lease it last renewed. */
  private valid(): boolean {
    return !this.closed && this.options.clock.now() < this.renewedAt + this.leaseMs - this.marginMs;
  }

  epochOf(deviceId: number): number | null {
    if (!this.valid()) return null;
    return this.held.get(deviceId)?.epoch ?? null;
  }

  /** Whether a node is up (ACTIVE), as of this node's last heartbeat round. */
  isUp(name: string): boolean {
    return name === this.node ? this.valid() : this.liveNodes.has(name);
  }

  /** Devices held here now (for metrics and the poll fallback). */
  heldDevices(): number[] {
    return this.valid() ? [...this.held.keys()] : [];
  }

  async fence(db: Db, deviceId: number, epoch: number): Promise<void> {
    // Within one transaction (a group commit of many outcomes) each lease is checked, and locked, once.
    const checked = db.isTransaction ? this.fenced.get(db) : undefined;
    const key = leaseKey(deviceId, epoch);
    if (checked?.has(key) === true) return;
    if (await clusterRepository.fence(db, { deviceId, name: this.node, epoch })) {
      if (db.isTransaction) {
        if (checked === undefined) this.fenced.set(db, new Set([key]));
        else checked.add(key);
      }
      return;
    }
    this.options.logger.warn({ deviceId, epoch }, 'a write for a device was refused: its lease moved to another node');
    void this.lose(deviceId, epoch);
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
      name: this.node,
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
      this.options.logger.warn(
        { deviceId, epoch },
        'a write for a device was refused: its lease moved to another node',
      );
      void this.lose(deviceId, epoch);
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
    const epoch = this.epochOf(deviceId);
    if (epoch === null) return false;
    try {
      await this.fence(db, deviceId, epoch);
      return true;
    } catch (error) {
      if (error instanceof LeaseLostError) return false;
      throw error;
    }
  }

  async claimForPairing(deviceId: number): Promise<number | null> {
    const mine = this.epochOf(deviceId);
    if (mine !== null) return mine;
    if (!this.valid()) return null;
    const { store, clock } = this.options;
    const now = clock.now();
    const epoch = await store.db
      .transaction()
      .execute((trx) =>
        clusterRepository.claimOne(trx, { name: this.node, deviceId, now, cutoff: now - this.leaseMs }),
      );
    if (epoch === null) return null;
    this.held.set(deviceId, { epoch, pairing: true, since: ++this.seq });
    return epoch;
  }

  letGo(deviceId: number): void {
    if (!this.held.delete(deviceId)) return;
    void this.releaseInStore([deviceId]);
  }

  deviceChanged(deviceId: number): void {
    if (this.closed) return;
    this.publish(`d:${deviceId}`);
    this.wake();
  }

  /** Another node said something changed: look again now. */
  signalled(message: string): void {
    if (message.startsWith('d:')) {
      const deviceId = Number(message.slice(2));
      if (Number.isSafeInteger(deviceId) && this.epochOf(deviceId) !== null) {
        for (const listener of this.listeners) listener.changed?.(deviceId);
      }
    }
    if (message === 'l' || message.startsWith('d:')) this.wake();
  }

  /**
   * Where a request needing the device's live connection should run. `anywhere`: the request can also
   * be served without the connection (deleting a device), so with no live holder it runs here.
   */
  async route(deviceId: number, hop: boolean, anywhere = false): Promise<Route> {
    const { store, clock } = this.options;
    const [placement, wanted] = await Promise.all([
      clusterRepository.placement(store.db, deviceId),
      clusterRepository.isWanted(store.db, deviceId),
    ]);
    if (placement?.node === this.node) {
      return this.epochOf(deviceId) !== null || !wanted || anywhere ? { kind: 'here' } : { kind: 'unavailable' };
    }
    if (placement !== null && placement.node !== null && this.alive(placement, clock.now())) {
      if (hop || placement.url === null) return { kind: 'unavailable' };
      return { kind: 'forward', node: placement.node, url: placement.url };
    }
    // Nobody live holds it: a device that needs no connection is handled here (a pairing attempt claims
    // it); one that does waits for a node to take it over.
    return wanted && !anywhere ? { kind: 'unavailable' } : { kind: 'here' };
  }

  private alive(p: Placement, now: number): boolean {
    return p.stoppedAt === null && p.heartbeatAt !== null && p.heartbeatAt >= now - this.leaseMs;
  }

  /** Stops the rounds and hands every device back at once (SIGTERM): others reconnect them without waiting. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.timer !== null) clearTimeout(this.timer);
    if (this.expiryTimer !== null) clearTimeout(this.expiryTimer);
    this.timer = null;
    this.expiryTimer = null;
    await this.round?.catch(() => undefined);
    if (!this.started) return;
    const { store, clock } = this.options;
    try {
      const released = await store.db.transaction().execute(async (trx) => {
        const count = await clusterRepository.release(trx, this.node);
        await clusterRepository.stop(trx, { name: this.node, instance: this.instance, now: clock.now() });
        return count;
      });
      this.held.clear();
      await this.options.publish('l').catch(() => undefined);
      this.options.logger.info({ devices: released }, 'node stopped; its devices were handed to the other nodes');
    } catch (error) {
      this.options.logger.warn(
        { err: error },
        'handing devices back failed; other nodes take them when the lease runs out',
      );
    }
  }

  // --- rounds ---------------------------------------------------------------------

  /** Runs a round now and resolves when it is over (tests, which drive rounds by hand). */
  async roundNow(): Promise<void> {
    while (this.round !== null) await this.round;
    this.wake();
    while (this.round !== null) await this.round;
  }

  /** Runs a round now (coalesced with one under way). */
  wake(): void {
    if (!this.started || this.closed) return;
    if (this.round !== null) {
      this.again = true;
      return;
    }
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    this.round = this.runRound().finally(() => {
      this.round = null;
      if (this.closed) return;
      if (this.again) {
        this.again = false;
        this.wake();
        return;
      }
      this.timer = setTimeout(() => {
        this.timer = null;
        this.wake();
      }, this.heartbeatMs);
    });
  }

  private async runRound(): Promise<void> {
    try {
      const more = await this.oneRound();
      // Still below the share with devices left to take (a large takeover): go on at once.
      if (more) this.again = true;
    } catch (error) {
      this.options.logger.warn({ err: error }, 'cluster heartbeat failed; retrying');
    }
  }

  /** One round; true when another should follow at once. */
  private async oneRound(): Promise<boolean> {
    const { store, clock, logger } = this.options;
    // A round running after the lease ran out (the process was paused) drops everything first, as the timer would.
    await this.expire();
    const now = clock.now();
    const before = this.seq;
    const leases = await store.db
      .transaction()
      .execute((trx) => clusterRepository.heartbeat(trx, { name: this.node, instance: this.instance, now }));
    if (this.closed) return false;
    if (leases === null) {
      logger.error(
        { node: this.node },
        'another process took over this node name; this one holds no device any more (give each node its own GATEWAY_SERVER_NAME)',
      );
      this.renewedAt = -Infinity;
      await this.dropAll();
      this.closed = true;
      return false;
    }
    this.renewedAt = now;
    this.armExpiry();
    await this.reconcile(leases, before);
    this.poll();

    const census = await clusterRepository.census(store.db, now - this.leaseMs);
    this.liveNodes = new Set(census.liveNodes);
    const held = [...this.held.values()].filter((h) => !h.pairing).length;
    const plan = balance({
      wanted: census.wanted,
      liveNodes: Math.max(1, census.liveNodes.length),
      held,
      maxClaims: this.claimBatch,
      maxReleases: this.maxReleases,
    });
    if (plan.release > 0) await this.handBack(plan.release);
    if (plan.claim === 0 || this.closed) return false;
    const claimed = await store.db
      .transaction()
      .execute((trx) =>
        clusterRepository.claim(trx, { name: this.node, now, cutoff: now - this.leaseMs, limit: plan.claim }),
      );
    if (this.closed) return false;
    for (const { deviceId, epoch } of claimed) this.acquire(deviceId, epoch);
    if (claimed.length > 0) logger.info({ devices: claimed.length, target: plan.target }, 'devices taken over');
    return claimed.length === plan.claim && claimed.length > 0;
  }

  /** Makes the local view match the store's after a heartbeat. */
  private async reconcile(leases: readonly HeldLease[], before: number): Promise<void> {
    const inStore = new Map(leases.map((lease) => [lease.deviceId, lease]));
    const lost: number[] = [];
    for (const [deviceId, holding] of this.held) {
      // Taken while the heartbeat ran (a pairing attempt): the heartbeat's view is older than it.
      if (holding.since > before) continue;
      const lease = inStore.get(deviceId);
      if (lease === undefined || lease.epoch !== holding.epoch) lost.push(deviceId);
    }
    if (lost.length > 0) {
      this.options.logger.warn({ devices: lost.length }, 'devices were taken over by other nodes; dropped here');
      for (const deviceId of lost) await this.lose(deviceId, this.held.get(deviceId)!.epoch);
    }
    const unwanted: number[] = [];
    for (const lease of leases) {
      const holding = this.held.get(lease.deviceId);
      if (holding !== undefined && holding.since > before) continue;
      if (holding === undefined) {
        // Still ours in the store (the lease ran out here but nobody took it): held again.
        if (lease.wanted) this.acquire(lease.deviceId, lease.epoch);
        else unwanted.push(lease.deviceId);
      } else if (lease.wanted) {
        holding.pairing = false;
      } else if (!holding.pairing) {
        // Suspended, deleted or logged out meanwhile: its connection ends and the lease goes.
        unwanted.push(lease.deviceId);
      }
    }
    if (unwanted.length > 0) {
      for (const deviceId of unwanted) {
        if (this.held.delete(deviceId)) await this.tell(deviceId);
      }
      await this.releaseInStore(unwanted);
    }
    // Dropped when the lease ran out and not held again: another node has them now (or nobody needs them).
    for (const deviceId of this.expiredHere) {
      if (!this.held.has(deviceId)) await this.tell(deviceId);
    }
    this.expiredHere.clear();
  }

  /** Hands back `count` devices: each stops here first (connection dropped, lane finished), then its lease goes. */
  private async handBack(count: number): Promise<void> {
    const chosen = [...this.held].filter(([, h]) => !h.pairing).slice(-count);
    for (const [deviceId] of chosen) {
      this.held.delete(deviceId);
      await this.tell(deviceId);
    }
    await this.releaseInStore(chosen.map(([deviceId]) => deviceId));
    this.options.logger.info({ devices: chosen.length }, 'devices handed back to even out the cluster');
  }

  private acquire(deviceId: number, epoch: number): void {
    this.held.set(deviceId, { epoch, pairing: false, since: ++this.seq });
    for (const listener of this.listeners) listener.acquired?.(deviceId, epoch);
  }

  /** The device is gone from here (taken over, or a write was refused). */
  private async lose(deviceId: number, epoch: number): Promise<void> {
    const holding = this.held.get(deviceId);
    if (holding === undefined || holding.epoch !== epoch) return;
    this.held.delete(deviceId);
    await this.tell(deviceId);
  }

  /** Tells every listener the device is no longer held here, and waits until they stopped using it. */
  private async tell(deviceId: number, cause?: LossCause): Promise<void> {
    await Promise.allSettled([...this.listeners].map((listener) => listener.lost?.(deviceId, cause)));
  }

  private async dropAll(cause?: LossCause): Promise<void> {
    const devices = [...this.held.keys()];
    this.held.clear();
    await Promise.allSettled(devices.map((deviceId) => this.tell(deviceId, cause)));
  }

  private async releaseInStore(deviceIds: readonly number[]): Promise<void> {
    if (deviceIds.length === 0) return;
    try {
      await clusterRepository.release(this.options.store.db, this.node, deviceIds);
      this.publish('l');
    } catch (error) {
      // Still ours in the store: the next heartbeat finds them unwanted (or not held) and tries again.
      this.options.logger.warn({ err: error, devices: deviceIds.length }, 'handing devices back failed');
    }
  }

  /**
   * The lease runs out here unless renewed first: every device is dropped (a node cut off from the store,
   * or paused, stops sending within its lease time). A later heartbeat takes back what is still ours.
   */
  private armExpiry(): void {
    if (this.expiryTimer !== null) clearTimeout(this.expiryTimer);
    const at = this.renewedAt + this.leaseMs - this.marginMs;
    this.expiryTimer = setTimeout(
      () => {
        this.expiryTimer = null;
        void this.expire();
      },
      Math.max(0, at - this.options.clock.now()),
    );
  }

  /** Drops every device once this node's own lease has run out (by the timer, or by a round coming late). */
  private async expire(): Promise<void> {
    if (this.closed || this.valid() || this.held.size === 0) return;
    this.options.logger.warn(
      { devices: this.held.size },
      'the lease ran out before it could be renewed (store unreachable or process paused); every device dropped here',
    );
    for (const deviceId of this.held.keys()) this.expiredHere.add(deviceId);
    await this.dropAll('expired');
  }

  /** The poll fallback of the wake-ups: held devices with messages waiting are told to their listeners. */
  private poll(): void {
    const held = this.heldDevices();
    if (held.length === 0 || this.listeners.size === 0) return;
    messagesRepository.devicesWithPending(this.options.store.db, held).then(
      (ids) => this.work(ids),
      (error: unknown) => this.options.logger.warn({ err: error }, 'looking for waiting messages failed'),
    );
  }

  /** Devices with new work (a message accepted on another node): listeners move those held here. */
  work(deviceIds: readonly number[]): void {
    const mine = deviceIds.filter((id) => this.epochOf(id) !== null);
    if (mine.length === 0) return;
    for (const listener of this.listeners) listener.work?.(mine);
  }

  private publish(message: string): void {
    this.options
      .publish(message)
      .catch((error: unknown) =>
        this.options.logger.warn(
          { err: error },
          'telling the other nodes failed; they find out at their next heartbeat',
        ),
      );
  }
}
