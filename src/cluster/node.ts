/**
 * This process as a node of the cluster (docs/internals.md, Clusters, PostgreSQL): its
 * membership (announced at start, the heartbeat, handing everything back at close) and its
 * rounds of lease bookkeeping. The ledger of held devices and its listeners are
 * held-devices.ts; the fence of writes is fences.ts; routing a request is routing.ts.
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
import type { Clock, Timer } from '../clock.js';
import type { Store } from '../store/store.js';
import type { Db } from '../store/schema.js';
import { balance } from './balance.js';
import { WakeLoop } from '../wake-loop.js';
import { LeaseFences } from './fences.js';
import { HeldDevices } from './held-devices.js';
import type { DeviceHoldings, HoldingsListener } from './holdings.js';
import { clusterRepository, type LeaseRef } from './repository.js';
import { routeDevice, type Route } from './routing.js';

export type { Route } from './routing.js';

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
  /**
   * Which of these devices have work waiting (the poll fallback of the wake-ups). The composition root
   * answers it from the messages' store: the cluster is asked by the layers above and never reads them.
   */
  readonly devicesWithWork: (deviceIds: readonly number[]) => Promise<number[]>;
}

export class ClusterNode implements DeviceHoldings {
  readonly clustered = true;
  readonly node: string;
  /** This process; a restart under the same name takes the name over with a new instance. */
  readonly instance = randomUUID();
  private readonly held: HeldDevices;
  private readonly fences: LeaseFences;
  /** Clock time the last successful heartbeat was stamped with. */
  private renewedAt = -Infinity;
  private expiryTimer: Timer | null = null;
  /** Rounds, one at a time: every heartbeat interval, and when woken. */
  private readonly rounds: WakeLoop;
  private started = false;
  private closed = false;
  /** Nodes alive as of the last round (the device's `server.status`). */
  private liveNodes = new Set<string>();
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
    this.held = new HeldDevices(options.logger);
    this.fences = new LeaseFences({
      node: this.node,
      logger: options.logger,
      epochOf: (deviceId) => this.epochOf(deviceId),
      lost: (deviceId, epoch) => void this.held.lose(deviceId, epoch),
    });
    this.rounds = new WakeLoop({
      run: () => this.runRound(),
      onError: (error) => this.options.logger.warn({ err: error }, 'cluster heartbeat failed; retrying'),
      afterErrorMs: () => this.heartbeatMs,
      clock: options.clock,
    });
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
    return this.held.subscribe(listener);
  }

  /** Whether this node's own clock still trusts the lease it last renewed. */
  private valid(): boolean {
    return !this.closed && this.options.clock.now() < this.renewedAt + this.leaseMs - this.marginMs;
  }

  epochOf(deviceId: number): number | null {
    if (!this.valid()) return null;
    return this.held.epochOf(deviceId);
  }

  /** Whether a node is up (ACTIVE), as of this node's last heartbeat round. */
  isUp(name: string): boolean {
    return name === this.node ? this.valid() : this.liveNodes.has(name);
  }

  /** Devices held here now (for metrics and the poll fallback). */
  heldDevices(): number[] {
    return this.valid() ? this.held.ids() : [];
  }

  fence(db: Db, deviceId: number, epoch: number): Promise<void> {
    return this.fences.fence(db, deviceId, epoch);
  }

  fenceAll(db: Db, leases: ReadonlyArray<{ deviceId: number; epoch: number }>): Promise<Set<string>> {
    return this.fences.fenceAll(db, leases);
  }

  /** Network-state writes name a session; the device holding it is fenced (none: a pairing attempt, not fenced). */
  fenceSession(db: Db, session: string): Promise<boolean> {
    return this.fences.fenceSession(db, session);
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
    this.held.holdForPairing(deviceId, epoch);
    return epoch;
  }

  letGo(deviceId: number): void {
    const lease = this.held.forget(deviceId);
    if (lease === null) return;
    void this.releaseInStore([lease]);
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
      if (Number.isSafeInteger(deviceId) && this.epochOf(deviceId) !== null) this.held.changed(deviceId);
    }
    if (message === 'l' || message.startsWith('d:')) this.wake();
  }

  /**
   * Where a request needing the device's live connection should run. `anywhere`: the request can also
   * be served without the connection (deleting a device), so with no live holder it runs here.
   */
  route(deviceId: number, hop: boolean, anywhere = false): Promise<Route> {
    const here = {
      node: this.node,
      leaseMs: this.leaseMs,
      clock: this.options.clock,
      epochOf: (id: number) => this.epochOf(id),
    };
    return routeDevice(this.options.store.db, here, deviceId, hop, anywhere);
  }

  /** Stops the rounds and hands every device back at once (SIGTERM): others reconnect them without waiting. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.expiryTimer?.cancel();
    this.expiryTimer = null;
    await this.rounds.stop();
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
    await this.rounds.settled();
    this.wake();
    await this.rounds.settled();
  }

  /** Runs a round now (coalesced with one under way). */
  wake(): void {
    if (!this.started || this.closed) return;
    this.rounds.wake();
  }

  /** One round; the next is due a heartbeat interval after it (at once when it left work). */
  private async runRound(): Promise<number | null> {
    const more = await this.oneRound();
    if (this.closed) return null;
    // Still below the share with devices left to take (a large takeover): go on at once.
    if (more) this.rounds.wake();
    return this.options.clock.now() + this.heartbeatMs;
  }

  /** One round; true when another should follow at once. */
  private async oneRound(): Promise<boolean> {
    const { store, clock, logger } = this.options;
    // A round running after the lease ran out (the process was paused) drops everything first, as the timer would.
    await this.expire();
    const now = clock.now();
    const before = this.held.mark();
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
      await this.held.dropAll();
      this.closed = true;
      return false;
    }
    this.renewedAt = now;
    this.armExpiry();
    await this.held.reconcile(leases, before, (unwanted) => this.releaseInStore(unwanted));
    this.poll();

    const census = await clusterRepository.census(store.db, now - this.leaseMs);
    this.liveNodes = new Set(census.liveNodes);
    const plan = balance({
      wanted: census.wanted,
      liveNodes: Math.max(1, census.liveNodes.length),
      held: this.held.counted(),
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
    for (const { deviceId, epoch } of claimed) this.held.acquire(deviceId, epoch);
    if (claimed.length > 0) logger.info({ devices: claimed.length, target: plan.target }, 'devices taken over');
    return claimed.length === plan.claim && claimed.length > 0;
  }

  /** Hands back `count` devices: each stops here first (connection dropped, lane finished), then its lease goes. */
  private async handBack(count: number): Promise<void> {
    const chosen = await this.held.handBack(count);
    await this.releaseInStore(chosen);
    this.options.logger.info({ devices: chosen.length }, 'devices handed back to even out the cluster');
  }

  private async releaseInStore(leases: readonly LeaseRef[]): Promise<void> {
    if (leases.length === 0) return;
    try {
      await clusterRepository.release(this.options.store.db, this.node, leases);
      this.publish('l');
    } catch (error) {
      // Still ours in the store: the next heartbeat finds them unwanted (or not held) and tries again.
      this.options.logger.warn({ err: error, devices: leases.length }, 'handing devices back failed');
    }
  }

  /**
   * The lease runs out here unless renewed first: every device is dropped (a node cut off from the store,
   * or paused, stops sending within its lease time). A later heartbeat takes back what is still ours.
   */
  private armExpiry(): void {
    this.expiryTimer?.cancel();
    const { clock } = this.options;
    const at = this.renewedAt + this.leaseMs - this.marginMs;
    this.expiryTimer = clock.after(at - clock.now(), () => {
      this.expiryTimer = null;
      void this.expire();
    });
  }

  /** Drops every device once this node's own lease has run out (by the timer, or by a round coming late). */
  private async expire(): Promise<void> {
    if (this.closed || this.valid() || this.held.size === 0) return;
    this.options.logger.warn(
      { devices: this.held.size },
      'the lease ran out before it could be renewed (store unreachable or process paused); every device dropped here',
    );
    await this.held.expireAll();
  }

  /** The poll fallback of the wake-ups: held devices with messages waiting are told to their listeners. */
  private poll(): void {
    const held = this.heldDevices();
    if (held.length === 0 || !this.held.hasListeners) return;
    this.options.devicesWithWork(held).then(
      (ids) => this.work(ids),
      (error: unknown) => this.options.logger.warn({ err: error }, 'looking for waiting messages failed'),
    );
  }

  /** Devices with new work (a message accepted on another node): listeners move those held here. */
  work(deviceIds: readonly number[]): void {
    const mine = deviceIds.filter((id) => this.epochOf(id) !== null);
    if (mine.length === 0) return;
    this.held.work(mine);
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
