/**
 * Live network connections of the devices this node holds (docs/internals.md, Devices and pairing).
 *
 * Owns: pairing attempts (current QR, pairing window, EXPIRED), turning
 * network events into device state (PAIRED, connected, logged out) together
 * with their webhook events in one transaction, reconnecting dropped devices
 * with exponential backoff and jitter under a cap on simultaneous connects,
 * and reconnecting every paired device after a restart from its stored
 * session.
 *
 * State machine of one device here:
 *   (none) --currentQr--> pairing --paired--> session --connected--> open
 *   pairing --window over--> (none), device EXPIRED
 *   open --disconnected--> session (reconnect after backoff) --connected--> open
 *   any --logged_out--> (none), device UNPAIRED
 *
 * A paired device whose connection is being re-established because of the
 * store (this node's lease ran out while the store did not answer, or the
 * store failed a step of the reconnect) is `recovering` until its connection
 * opens or the network itself refuses it: sends answer 503 with Retry-After
 * meanwhile, not 400 `Device not connected` (docs/hardening.md).
 *
 * Which devices it connects is the cluster's to say (src/cluster/): it
 * connects a device when the cluster says it is held here and drops it at
 * once when it is not; every state write carries the lease epoch the device
 * was held under, so a node that lost the device writes nothing for it.
 *
 * Must never: hold the only copy of anything (the store is the truth; this is
 * a cache of sockets and timers, a few hundred bytes per device), let a
 * stale connection's late events change state (each connection has a
 * generation number), or connect a device the cluster does not hold here.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../clock.js';
import { recordEvent } from '../events/record.js';
import type { Network, NetworkConnection, NetworkEvent, ReconnectHint } from '../network/network.js';
import type { Store } from '../store/store.js';
import type { Db } from '../store/schema.js';
import { DeviceUnavailableError, LeaseLostError, type DeviceHoldings, type LossCause } from '../cluster/holdings.js';
import { storeFault } from '../store/faults.js';
import {
  QUEUE_END_BATCH,
  REASON_LOGGED_OUT,
  endQueueBatch,
  endQueueRest,
  type QueueEnd,
} from '../messages/end-queue.js';
import { networkStateRepository } from './network-state.js';
import { devicesRepository, type DeviceRow } from './repository.js';
import type { DeviceConnections } from './service.js';

export interface ConnectionManagerOptions {
  readonly store: Store;
  readonly clock: Clock;
  readonly network: Network;
  readonly serverName: string;
  /** Which devices this node holds, and the fence of their writes. */
  readonly holdings: DeviceHoldings;
  readonly logger: FastifyBaseLogger;
  readonly pairingWindowMs: number;
  /** How long a QR request waits for the network's first code. */
  readonly qrWaitMs?: number;
  readonly maxConcurrentConnects?: number;
  readonly reconnectBaseMs?: number;
  readonly reconnectMaxMs?: number;
  /** Earliest reconnect after another client replaced the session (docs/internals.md, WhatsApp and sandbox accounts: at least 60 s). */
  readonly replacedRetryMs?: number;
  /** Earliest reconnect after the network refused the protocol version (docs/internals.md, WhatsApp and sandbox accounts: at least 10 min). */
  readonly outdatedRetryMs?: number;
  /** Called after a transaction that recorded webhook events has committed (wakes the deliverer). */
  readonly onEventsRecorded?: () => void;
  /**
   * The network a pairing of the account's device is on, recorded with the pairing (docs/networks-per-device.md: the device
   * stays on it). Read in the pairing's transaction.
   */
  readonly pairingNetwork: (accountId: number, db: Db) => Promise<string>;
}

/** Events other features listen to (message receipts, incoming messages, group changes, connection open). */
export type DeviceNetworkListener = (deviceId: number, event: NetworkEvent) => void;

export class QrUnavailableError extends Error {
  constructor(
    message: string,
    /** Set when the pairing attempt was ended on purpose (a logout, deletion or suspension) while waiting. */
    readonly endedBy: 'release' | null = null,
  ) {
    super(message);
  }
}

interface QrWaiter {
  resolve(qr: string): void;
  reject(error: Error): void;
  timer: NodeJS.Timeout;
}

interface Live {
  mode: 'pairing' | 'session';
  generation: number;
  /** The lease epoch this node holds the device under; its writes are fenced by it. */
  epoch: number;
  conn: NetworkConnection | null;
  open: boolean;
  qr: string | null;
  qrWaiters: QrWaiter[];
  pairingTimer: NodeJS.Timeout | null;
  /** When the pairing window of the running attempt closes (epoch ms); null outside pairing. */
  pairingEndsAt: number | null;
  reconnectTimer: NodeJS.Timeout | null;
  failures: number;
  /** When the current connection opened (0: not open), to tell a flapping connection from a stable one. */
  openedAt: number;
  /** Times of the recent drops, for the reconnect-loop warning (at most LOOP_DROPS kept). */
  drops: number[];
  holdsSlot: boolean;
  /** Network events of one device are applied in order. */
  chain: Promise<void>;
}

/** A connection that stayed open this long was stable: the next drop starts the backoff again from the base. */
const STABLE_MS = 30_000;
/**
 * How long a closed connection's background writes (a WhatsApp session's credentials and keys) are waited for
 * before its device is let go all the same: the next holder should read the session as last written, but a store
 * that does not answer must not hold a handover up for ever.
 */
const SETTLE_LIMIT_MS = 5_000;

/** Waits until the connections' background writes are over, or SETTLE_LIMIT_MS. */
async function settled(connections: ReadonlyArray<NetworkConnection | null>): Promise<void> {
  const writes = connections.map((conn) => conn?.settled?.().catch(() => undefined));
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<void>((resolve) => (timer = setTimeout(resolve, SETTLE_LIMIT_MS)));
  try {
    await Promise.race([Promise.allSettled(writes), limit]);
  } finally {
    clearTimeout(timer);
  }
}
/** This many drops within LOOP_WINDOW_MS is a device reconnecting in a loop (warned once per such run). */
const LOOP_DROPS = 5;
const LOOP_WINDOW_MS = 5 * 60_000;

export class ConnectionManager implements DeviceConnections {
  private readonly live = new Map<number, Live>();
  /** Paired devices whose connection is being re-established because of the store (see the header). */
  private readonly recovering = new Set<number>();
  private readonly listeners = new Set<DeviceNetworkListener>();
  private generation = 0;
  private slotsInUse = 0;
  private readonly slotQueue: Array<() => void> = [];
  private closed = false;
  private readonly qrWaitMs: number;
  private readonly maxConcurrentConnects: number;
  private readonly reconnectBaseMs: number;
  private readonly reconnectMaxMs: number;
  private readonly retryFloorMs: Readonly<Record<ReconnectHint, number>>;
  /** Devices whose refused protocol version was already logged: once per device, not per retry. */
  private readonly outdatedLogged = new Set<number>();
  /** Devices whose network this gateway does not run, already warned about: once per device. */
  private readonly absentLogged = new Set<number>();

  constructor(private readonly options: ConnectionManagerOptions) {
    this.qrWaitMs = options.qrWaitMs ?? 10_000;
    this.maxConcurrentConnects = options.maxConcurrentConnects ?? 16;
    this.reconnectBaseMs = options.reconnectBaseMs ?? 1_000;
    this.reconnectMaxMs = options.reconnectMaxMs ?? 60_000;
    this.retryFloorMs = {
      backoff: 0,
      replaced: options.replacedRetryMs ?? 60_000,
      outdated: options.outdatedRetryMs ?? 600_000,
      absent: options.outdatedRetryMs ?? 600_000,
    };
    options.holdings.subscribe({
      acquired: (deviceId, epoch) => this.adopt(deviceId, epoch),
      lost: (deviceId, cause) => this.forget(deviceId, cause),
    });
  }

  onEvent(listener: DeviceNetworkListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * After start-up: the paired devices reconnect from their stored sessions; all of them with one node
   * (SQLite), those the cluster hands this node otherwise (see adopt).
   */
  async start(): Promise<void> {
    const { db } = this.options.store;
    await devicesRepository.clearConnectedOf(db, this.options.serverName);
    if (!this.options.holdings.clustered) {
      const paired = await devicesRepository.pairedIds(db);
      for (const id of paired) this.connectSession(id, 0, 0);
    }
    void this.discardOrphanedState();
  }

  /** The cluster made this node the device's holder: connect it from its stored session. */
  private adopt(deviceId: number, epoch: number): void {
    if (this.closed) return;
    const live = this.live.get(deviceId);
    if (live !== undefined && live.epoch === epoch) return;
    if (live !== undefined) this.drop(deviceId);
    this.connectSession(deviceId, 0, epoch);
  }

  /** The device is no longer held here: its connection closes, and its lease goes once the writes it began are over. */
  private async forget(deviceId: number, cause?: LossCause): Promise<void> {
    const live = this.live.get(deviceId);
    // A lease that ran out because the store did not answer is taken back here once it answers again.
    if (cause === 'expired' && live?.mode === 'session') this.recovering.add(deviceId);
    else this.recovering.delete(deviceId);
    if (live === undefined) return;
    this.drop(deviceId);
    // Not fenced (the lease is gone): only while the row still names this node, never over the new holder's.
    void devicesRepository
      .setDisconnectedIfServer(this.options.store.db, deviceId, this.options.serverName)
      .catch(() => undefined);
    await settled([live.conn]);
  }

  /** A write for a device, refused unless this node still holds it under `epoch` (in one transaction). */
  private fenced<T>(deviceId: number, epoch: number, work: (trx: Db) => Promise<T>): Promise<T> {
    return this.options.store.db.transaction().execute(async (trx) => {
      await this.options.holdings.fence(trx, deviceId, epoch);
      return work(trx);
    });
  }

  /** The epoch this node holds the device under now, or DeviceUnavailableError. */
  private heldEpoch(deviceId: number): number {
    const epoch = this.options.holdings.epochOf(deviceId);
    if (epoch === null) throw new DeviceUnavailableError(deviceId);
    return epoch;
  }

  /**
   * Network state of pairing attempts that never became a device's (the process stopped during one) is
   * deleted once it is well past any pairing window: an attempt still running elsewhere is younger.
   */
  private async discardOrphanedState(): Promise<void> {
    const { db } = this.options.store;
    const before = this.options.clock.now() - Math.max(3_600_000, 2 * this.options.pairingWindowMs);
    try {
      for (;;) {
        const sessions = await networkStateRepository.orphans(db, before, 100);
        for (const session of sessions) {
          await db.transaction().execute((trx) => networkStateRepository.discard(trx, session));
        }
        if (sessions.length < 100 || this.closed) return;
      }
    } catch (error) {
      this.options.logger.warn({ err: error }, 'deleting orphaned network state failed');
    }
  }

  /** The open connection of a device, or null. */
  connection(deviceId: number): NetworkConnection | null {
    const live = this.live.get(deviceId);
    if (live?.open !== true) return null;
    // Not held here any more (or this node's lease ran out): nothing may be sent through it.
    return this.options.holdings.epochOf(deviceId) === live.epoch ? live.conn : null;
  }

  isConnected(deviceId: number): boolean {
    return this.connection(deviceId) !== null;
  }

  /**
   * True while the device is not connected because its connection is being re-established after the
   * store failed it: it is unavailable for a moment (503, retry), not disconnected (400).
   */
  isRecovering(deviceId: number): boolean {
    return this.recovering.has(deviceId) && !this.isConnected(deviceId);
  }

  /** The current QR text of the device's pairing attempt, starting one if none runs. */
  async currentQr(device: DeviceRow): Promise<string> {
    let live = this.live.get(device.id);
    if (live?.mode === 'pairing' && live.qr !== null) return live.qr;
    if (live === undefined || live.mode !== 'pairing') {
      // The attempt runs where the device is held; a device nobody holds is taken here for it.
      const epoch =
        this.options.holdings.epochOf(device.id) ?? (await this.options.holdings.claimForPairing(device.id));
      if (epoch === null) throw new DeviceUnavailableError(device.id);
      this.drop(device.id);
      live = this.startPairing(device, epoch);
      if (device.paired_status === 'EXPIRED') {
        await this.fenced(device.id, epoch, (trx) =>
          devicesRepository.update(trx, device.account_id, device.id, {
            paired_status: 'UNPAIRED',
            updated_at: this.options.clock.now(),
          }),
        );
      }
    }
    const attempt = live;
    if (attempt.qr !== null) return attempt.qr;
    return new Promise<string>((resolve, reject) => {
      const waiter: QrWaiter = {
        resolve,
        reject,
        timer: setTimeout(() => {
          attempt.qrWaiters = attempt.qrWaiters.filter((w) => w !== waiter);
          reject(new QrUnavailableError('the network sent no QR code in time'));
        }, this.qrWaitMs),
      };
      attempt.qrWaiters.push(waiter);
    });
  }

  /** When the running pairing attempt of a device ends (epoch ms), or null when none runs here. */
  pairingEndsAt(deviceId: number): number | null {
    const live = this.live.get(deviceId);
    return live?.mode === 'pairing' ? live.pairingEndsAt : null;
  }

  /**
   * Drops the device's connection and opens it again (API `POST /devices/{id}/restart`).
   * A paired device reconnects from its stored session at once; a running pairing
   * attempt is ended (the next QR request starts a fresh one, with a new window).
   */
  async restart(device: DeviceRow): Promise<void> {
    this.drop(device.id);
    if (device.paired_status !== 'PAIRED' || device.network_session === null) return;
    const epoch = this.heldEpoch(device.id);
    // Written before the new connection opens, so its `connected` always lands after this.
    await this.fenced(device.id, epoch, (trx) => devicesRepository.setConnected(trx, device.id, false));
    this.connectSession(device.id, 0, epoch);
  }

  /**
   * A pairing code for `phone` in the device's pairing attempt (starting one if none runs). The
   * network is asked once the attempt is ready for pairing, i.e. after its first QR code.
   */
  async pairingCode(device: DeviceRow, phone: string): Promise<string> {
    await this.currentQr(device);
    const live = this.live.get(device.id);
    if (live?.mode !== 'pairing' || live.conn === null) throw new QrUnavailableError('the pairing attempt ended');
    const conn = live.conn;
    let timer: NodeJS.Timeout | undefined;
    try {
      return await Promise.race([
        conn.requestPairingCode(phone),
        new Promise<never>((_, reject) => {
          timer = setTimeout(
            () => reject(new QrUnavailableError('the network sent no pairing code in time')),
            this.qrWaitMs,
          );
        }),
      ]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Ends the device's connection here; with `logout`, its network session too. */
  async release(deviceId: number, { logout }: { logout: boolean }): Promise<void> {
    await this.end(deviceId, logout);
    const epoch = this.options.holdings.epochOf(deviceId);
    // Not held here: the holder drops it when it sees the device needs no connection.
    if (epoch === null) return;
    // Dropped quietly (no `disconnected` event from a dropped connection): the row must say so itself.
    try {
      await this.fenced(deviceId, epoch, (trx) => devicesRepository.setConnected(trx, deviceId, false));
    } catch (error) {
      // The lease ended meanwhile (a deletion ends it in its own transaction): the device is no longer this node's.
      if (error instanceof LeaseLostError) return;
      throw error;
    }
    this.options.holdings.letGo(deviceId);
  }

  /** A device made active again: it reconnects from its stored session (openSession checks it has one). */
  resume(deviceId: number): void {
    if (this.closed || this.live.has(deviceId)) return;
    const epoch = this.options.holdings.epochOf(deviceId);
    // Held by nobody (it was let go when suspended): a node takes it when woken.
    if (epoch === null) this.options.holdings.deviceChanged(deviceId);
    else this.connectSession(deviceId, 0, epoch);
  }

  /**
   * Logs a device out (API `POST /devices/{id}/logout`): the session ends and
   * the device is UNPAIRED. The row goes from connected to UNPAIRED in one
   * write, so a reader never sees "paired but offline" in between.
   */
  async logout(device: DeviceRow): Promise<void> {
    // Nothing stored to end: only a pairing attempt (if one runs here) stops.
    if (device.paired_status !== 'PAIRED') return this.end(device.id, true);
    const epoch = this.heldEpoch(device.id);
    await this.end(device.id, true);
    await this.markLoggedOut(device.id, epoch, 'logout requested through the API');
  }

  /** Ends the connection here; with `logout`, its session on the network too. */
  private async end(deviceId: number, logout: boolean): Promise<void> {
    const live = this.live.get(deviceId);
    if (logout && live?.open === true && live.conn !== null) {
      // An offline device cannot be logged out on the network; its stored session is forgotten all the same.
      await live.conn
        .logout()
        .catch((error: unknown) => this.options.logger.warn({ err: error, deviceId }, 'logout failed'));
    }
    this.drop(deviceId, 'release');
  }

  /**
   * Resolves once the network events already received for these devices (those held here) are applied and
   * stored: after a scan, the pairing is recorded and the device sendable by its number. Devices not held here
   * are skipped; a failed event was logged where it failed, so this never rejects.
   */
  async settled(deviceIds: readonly number[]): Promise<void> {
    await Promise.all(deviceIds.map((id) => this.live.get(id)?.chain));
  }

  async close(): Promise<void> {
    this.closed = true;
    const chains = [...this.live.values()].map((live) => live.chain);
    const connections = [...this.live.values()].map((live) => live.conn);
    for (const id of [...this.live.keys()]) this.drop(id);
    await Promise.all(chains);
    // Before the cluster hands the devices on: what the connections were still writing lands first.
    await settled(connections);
    // Dropped quietly: the rows say so themselves (another node sets them again when it connects them).
    await devicesRepository.clearConnectedOf(this.options.store.db, this.options.serverName).catch(() => undefined);
  }

  // --- pairing -------------------------------------------------------------

  private startPairing(device: DeviceRow, epoch: number): Live {
    const live = this.newLive('pairing', epoch);
    this.live.set(device.id, live);
    live.pairingTimer = setTimeout(() => this.expirePairing(device.id, live.generation), this.options.pairingWindowMs);
    live.pairingEndsAt = this.options.clock.now() + this.options.pairingWindowMs;
    live.conn = this.options.network.connect(
      // The account's view of the sandbox's phones (other networks ignore it).
      { deviceId: device.id, session: null, expectedPhone: device.expected_phone, view: String(device.account_id) },
      (event) => this.enqueue(device.id, live.generation, event),
    );
    return live;
  }

  private expirePairing(deviceId: number, generation: number): void {
    const live = this.live.get(deviceId);
    if (live === undefined || live.generation !== generation || live.mode !== 'pairing') return;
    // The lease is kept until the expiry is written under it.
    this.drop(deviceId, null, false);
    void this.serial(live, async () => {
      const now = this.options.clock.now();
      const expired = await this.fenced(deviceId, live.epoch, async (trx) => {
        const device = await devicesRepository.findById(trx, deviceId);
        if (device === undefined || device.deleted_at !== null || device.paired_status !== 'UNPAIRED') return false;
        await devicesRepository.markExpired(trx, deviceId, now);
        await recordEvent(trx, device, 'device.qr_expired', { paired_status: 'EXPIRED' }, now);
        return true;
      });
      this.options.holdings.letGo(deviceId);
      if (!expired) return;
      this.options.logger.info(
        { deviceId, pairingWindowMs: this.options.pairingWindowMs },
        'QR expired: no phone scanned it within the pairing window',
      );
      this.options.onEventsRecorded?.();
    });
  }

  // --- sessions and reconnects --------------------------------------------

  private connectSession(deviceId: number, delayMs: number, epoch: number): void {
    if (this.closed) return;
    const live = this.live.get(deviceId) ?? this.newLive('session', epoch);
    live.mode = 'session';
    live.epoch = epoch;
    this.live.set(deviceId, live);
    if (live.reconnectTimer !== null) clearTimeout(live.reconnectTimer);
    live.reconnectTimer = setTimeout(() => {
      live.reconnectTimer = null;
      this.acquireSlot(() => void this.openSession(deviceId, live));
    }, delayMs);
  }

  private async openSession(deviceId: number, live: Live): Promise<void> {
    live.holdsSlot = true;
    if (this.closed || this.live.get(deviceId) !== live) return this.releaseSlot(live);
    if (this.options.holdings.epochOf(deviceId) !== live.epoch) {
      // Taken over (or this node's lease ran out) while waiting for a slot.
      this.releaseSlot(live);
      this.drop(deviceId);
      return;
    }
    let device: DeviceRow | undefined;
    try {
      device = await devicesRepository.findById(this.options.store.db, deviceId);
    } catch (error) {
      this.releaseSlot(live);
      if (this.live.get(deviceId) !== live || storeFault(error) === null) {
        if (this.live.get(deviceId) === live) this.drop(deviceId);
        return;
      }
      // The store did not answer: the device is still paired, so it is tried again (it used to be dropped for good).
      this.recovering.add(deviceId);
      this.scheduleReconnect(deviceId, live);
      return;
    }
    if (
      device === undefined ||
      device.network_session === null ||
      device.deleted_at !== null ||
      device.status !== 'ACTIVE'
    ) {
      this.releaseSlot(live);
      // Only this attempt: a pairing started meanwhile (a QR request) is not this one to end.
      if (this.live.get(deviceId) === live) {
        this.recovering.delete(deviceId);
        this.drop(deviceId);
      }
      return;
    }
    if (this.live.get(deviceId) !== live) return this.releaseSlot(live);
    live.generation = ++this.generation;
    const generation = live.generation;
    live.conn = this.options.network.connect(
      { deviceId, session: device.network_session, view: String(device.account_id) },
      (event) => this.enqueue(deviceId, generation, event),
    );
  }

  /** Schedules the next attempt with exponential backoff and jitter, no sooner than `hint` allows; answers its delay. */
  private scheduleReconnect(deviceId: number, live: Live, hint: ReconnectHint = 'backoff'): number {
    live.failures += 1;
    const ceiling = Math.min(this.reconnectMaxMs, this.reconnectBaseMs * 2 ** Math.min(live.failures - 1, 20));
    // Equal jitter: half fixed, half random, so a fleet that dropped together does not return together.
    const delay = ceiling / 2 + Math.random() * (ceiling / 2);
    const wait = Math.max(delay, this.retryFloorMs[hint]);
    this.connectSession(deviceId, wait, live.epoch);
    return wait;
  }

  /** Operators hear once per run of LOOP_DROPS drops within LOOP_WINDOW_MS, not on every drop. */
  private warnIfLooping(deviceId: number, live: Live): void {
    const now = Date.now();
    live.drops.push(now);
    if (live.drops.length > LOOP_DROPS) live.drops.shift();
    if (live.drops.length < LOOP_DROPS || now - live.drops[0]! > LOOP_WINDOW_MS) return;
    this.options.logger.warn(
      { deviceId, drops: live.drops.length, withinMs: now - live.drops[0]!, attempt: live.failures },
      'device reconnecting in a loop',
    );
    live.drops = [];
  }

  /** Drops that need more than the usual backoff are told to the operator (docs/internals.md, WhatsApp and sandbox accounts). */
  private logDrop(deviceId: number, reason: string, hint: ReconnectHint): void {
    if (hint === 'replaced') {
      this.options.logger.warn(
        { deviceId, reason, retryInMs: this.retryFloorMs.replaced },
        'another client replaced the device session; reconnecting later',
      );
    } else if (hint === 'absent' && !this.absentLogged.has(deviceId)) {
      this.absentLogged.add(deviceId);
      this.options.logger.warn(
        { deviceId, reason, retryInMs: this.retryFloorMs.absent },
        'the device is paired on a network this gateway does not run; it stays paired there',
      );
    } else if (hint === 'outdated' && !this.outdatedLogged.has(deviceId)) {
      this.outdatedLogged.add(deviceId);
      this.options.logger.error(
        { deviceId, reason, retryInMs: this.retryFloorMs.outdated },
        'the network refused the client protocol version; the network library needs an upgrade',
      );
    }
  }

  private acquireSlot(run: () => void): void {
    if (this.slotsInUse < this.maxConcurrentConnects) {
      this.slotsInUse += 1;
      run();
    } else {
      this.slotQueue.push(() => {
        this.slotsInUse += 1;
        run();
      });
    }
  }

  private releaseSlot(live: Live): void {
    if (!live.holdsSlot) return;
    live.holdsSlot = false;
    this.slotsInUse -= 1;
    const next = this.slotQueue.shift();
    if (next !== undefined && !this.closed) next();
  }

  // --- events ---------------------------------------------------------------

  private enqueue(deviceId: number, generation: number, event: NetworkEvent): void {
    const live = this.live.get(deviceId);
    if (live === undefined || live.generation !== generation) {
      // A message the network handed to a connection that has since ended was receipted already: it is the
      // device's all the same, and must reach the store (docs/whatsapp.md, Nothing received is lost).
      if (event.type === 'incoming_message') for (const listener of this.listeners) listener(deviceId, event);
      return;
    }
    void this.serial(live, () => this.apply(deviceId, live, event));
  }

  private serial(live: Live, work: () => Promise<void>): Promise<void> {
    live.chain = live.chain.then(work).catch((error: unknown) => {
      // A refused write means the device moved to another node: the cluster drops it here; nothing to log twice.
      if (error instanceof LeaseLostError) return;
      this.options.logger.error({ err: error }, 'applying a network event failed');
    });
    return live.chain;
  }

  private async apply(deviceId: number, live: Live, event: NetworkEvent): Promise<void> {
    switch (event.type) {
      case 'qr': {
        live.qr = event.qr;
        for (const waiter of live.qrWaiters.splice(0)) {
          clearTimeout(waiter.timer);
          waiter.resolve(event.qr);
        }
        return;
      }
      case 'paired':
        return this.onPaired(deviceId, live, event.phone, event.session);
      case 'connected': {
        // Heard before the connection was dropped here (a refused pairing): it is not open for anyone.
        if (this.live.get(deviceId) !== live) return;
        this.outdatedLogged.delete(deviceId);
        this.recovering.delete(deviceId);
        live.open = true;
        live.openedAt = Date.now();
        // The backoff is not reset yet: a connection that drops again at once is flapping (see the drop).
        if (live.failures > 0) this.options.logger.info({ deviceId, attempts: live.failures }, 'device reconnected');
        else this.options.logger.info({ deviceId }, 'device connected');
        this.releaseSlot(live);
        try {
          await this.fenced(deviceId, live.epoch, (trx) =>
            devicesRepository.setConnected(trx, deviceId, true, this.options.serverName),
          );
        } catch (error) {
          if (storeFault(error) === null) throw error;
          // Open all the same: this node sends through it; the row says so at the next connect.
          this.options.logger.warn(
            { deviceId, fault: storeFault(error)?.code },
            'device connected, but the store did not take the write',
          );
        }
        break;
      }
      case 'disconnected': {
        live.open = false;
        this.releaseSlot(live);
        if (live.mode === 'pairing') {
          this.options.logger.info(
            { deviceId, reason: event.reason },
            'pairing attempt ended: the network is unavailable',
          );
          this.failQrWaiters(live, `the network is unavailable (${event.reason})`);
          this.drop(deviceId);
          return;
        }
        if (live.openedAt !== 0 && Date.now() - live.openedAt >= STABLE_MS) live.failures = 0;
        live.openedAt = 0;
        // The network refused or dropped it: not connected, whatever the store did before.
        this.recovering.delete(deviceId);
        try {
          await this.fenced(deviceId, live.epoch, (trx) => devicesRepository.setConnected(trx, deviceId, false));
        } catch (error) {
          if (storeFault(error) === null) throw error;
          // The store did not take the write: the reconnect below must happen all the same (it used not to).
          this.recovering.add(deviceId);
          this.options.logger.warn(
            { deviceId, fault: storeFault(error)?.code },
            'device connection dropped while the store is out of service; reconnecting',
          );
        }
        const hint = event.retry ?? 'backoff';
        this.logDrop(deviceId, event.reason, hint);
        if (this.live.get(deviceId) === live && !this.closed) {
          const delayMs = this.scheduleReconnect(deviceId, live, hint);
          this.options.logger.info(
            { deviceId, reason: event.reason, attempt: live.failures, reconnectInMs: Math.round(delayMs) },
            'device connection dropped; reconnecting',
          );
          this.warnIfLooping(deviceId, live);
        }
        break;
      }
      case 'logged_out': {
        this.recovering.delete(deviceId);
        live.open = false;
        this.releaseSlot(live);
        this.drop(deviceId);
        // Tells the listeners itself, also for a logout asked through the API.
        await this.markLoggedOut(deviceId, live.epoch, event.reason);
        return;
      }
      default:
        break;
    }
    for (const listener of this.listeners) listener(deviceId, event);
  }

  private async onPaired(deviceId: number, live: Live, phone: string, session: string): Promise<void> {
    const now = this.options.clock.now();
    const refused = await this.fenced(deviceId, live.epoch, async (trx) => {
      const device = await devicesRepository.findById(trx, deviceId);
      if (device === undefined || device.deleted_at !== null) return 'device is gone';
      if (device.expected_phone !== null && device.expected_phone !== phone) return 'another number scanned the QR';
      const twin = await devicesRepository.pairedTwin(trx, device.account_id, phone, deviceId);
      if (twin !== undefined) return `number already paired to device ${twin.id}`;
      // The device stays on the network it paired on, whatever GATEWAY_NETWORK says later (docs/networks-per-device.md).
      const network = await this.options.pairingNetwork(device.account_id, trx);
      const paired = await devicesRepository.markPaired(
        trx,
        deviceId,
        { phone, session, network },
        this.options.serverName,
        now,
      );
      await recordEvent(trx, paired, 'device.paired', { paired_status: 'PAIRED', phone }, now);
      return null;
    });
    if (refused === null) {
      this.options.onEventsRecorded?.();
      this.options.logger.info({ deviceId, phone }, 'device paired');
    }
    if (refused !== null) {
      this.options.logger.warn({ deviceId, reason: refused }, 'pairing refused');
      await this.refusePairing(deviceId, live, refused, session);
      return;
    }
    live.mode = 'session';
    live.qr = null;
    if (live.pairingTimer !== null) clearTimeout(live.pairingTimer);
    live.pairingTimer = null;
    live.pairingEndsAt = null;
  }

  /**
   * A phone the device must not pair with confirmed the QR: it is unlinked on the network (once the
   * connection is open), the session's stored state goes, and the device stays UNPAIRED, told with
   * `device.disconnected` and the reason.
   */
  private async refusePairing(deviceId: number, live: Live, reason: string, session: string): Promise<void> {
    await live.conn
      ?.logout()
      .catch((error: unknown) =>
        this.options.logger.warn(
          { err: error, deviceId },
          'unlinking the refused phone failed; its session is deleted',
        ),
      );
    // The lease is kept until the refusal is written under it.
    this.drop(deviceId, null, false);
    const now = this.options.clock.now();
    const told = await this.fenced(deviceId, live.epoch, async (trx) => {
      await networkStateRepository.discard(trx, session);
      await devicesRepository.setConnected(trx, deviceId, false);
      const device = await devicesRepository.findById(trx, deviceId);
      if (device === undefined || device.deleted_at !== null || device.paired_status !== 'UNPAIRED') return false;
      await recordEvent(
        trx,
        device,
        'device.disconnected',
        { paired_status: 'UNPAIRED', reason: `pairing refused: ${reason}` },
        now,
      );
      return true;
    }).catch((error: unknown) => {
      this.options.logger.error({ err: error, deviceId }, 'recording the refused pairing failed');
      return false;
    });
    this.options.holdings.letGo(deviceId);
    if (told) this.options.onEventsRecorded?.();
  }

  /**
   * The session is gone: UNPAIRED, and the queue of that pairing ends with it
   * (its messages were accepted for a number this device may no longer have),
   * in the same transaction as far as the first batch goes.
   */
  private async markLoggedOut(deviceId: number, epoch: number, reason: string): Promise<void> {
    const { db } = this.options.store;
    const now = this.options.clock.now();
    const ended = await this.fenced(deviceId, epoch, async (trx) => {
      const device = await devicesRepository.findById(trx, deviceId);
      if (device === undefined || device.deleted_at !== null || device.paired_status !== 'PAIRED') return null;
      const updated = await devicesRepository.markLoggedOut(trx, deviceId, device.expected_phone, now);
      if (updated === undefined) return null; // another logout got there first
      // Events name the number that was logged out, not the one the row falls back to.
      // The network's stored state of the session ends with it (docs/internals.md, WhatsApp and sandbox accounts).
      if (device.network_session !== null) await networkStateRepository.discard(trx, device.network_session);
      const end: QueueEnd = { device: { ...updated, phone: device.phone }, reason: REASON_LOGGED_OUT, announce: true };
      await recordEvent(trx, end.device, 'device.disconnected', { paired_status: 'UNPAIRED', reason }, now);
      return { end, phone: device.phone, first: await endQueueBatch(trx, end, now) };
    });
    if (ended === null) return;
    // Logged out: no connection needed any more, the lease goes.
    this.options.holdings.letGo(deviceId);
    this.options.onEventsRecorded?.();
    this.options.logger.info({ deviceId, phone: ended.phone, reason }, 'device logged out');
    let failed = ended.first;
    if (failed === QUEUE_END_BATCH) {
      failed += await endQueueRest(db, ended.end, this.options.clock);
      this.options.onEventsRecorded?.();
    }
    if (failed > 0) {
      this.options.logger.info(
        { deviceId, count: failed, reason: REASON_LOGGED_OUT },
        'queued messages failed: the pairing they were accepted for ended',
      );
    }
    for (const listener of this.listeners) listener(deviceId, { type: 'logged_out', reason });
  }

  // --- bookkeeping ------------------------------------------------------------

  private newLive(mode: Live['mode'], epoch: number): Live {
    return {
      mode,
      generation: ++this.generation,
      epoch,
      conn: null,
      open: false,
      qr: null,
      qrWaiters: [],
      pairingTimer: null,
      pairingEndsAt: null,
      reconnectTimer: null,
      failures: 0,
      openedAt: 0,
      drops: [],
      holdsSlot: false,
      chain: Promise.resolve(),
    };
  }

  private failQrWaiters(live: Live, message: string, endedBy: QrUnavailableError['endedBy'] = null): void {
    for (const waiter of live.qrWaiters.splice(0)) {
      clearTimeout(waiter.timer);
      waiter.reject(new QrUnavailableError(message, endedBy));
    }
  }

  /** Forgets the device here: closes its connection quietly and clears its timers. */
  private drop(deviceId: number, endedBy: QrUnavailableError['endedBy'] = null, letGo = true): void {
    // Ended on purpose (logout, deletion, suspension): nothing is being re-established.
    if (endedBy === 'release') this.recovering.delete(deviceId);
    const live = this.live.get(deviceId);
    if (live === undefined) return;
    this.live.delete(deviceId);
    live.generation = -1;
    live.open = false;
    // A pairing attempt that ends unpaired needs the device no longer here.
    if (live.mode === 'pairing' && letGo) this.options.holdings.letGo(deviceId);
    if (live.pairingTimer !== null) clearTimeout(live.pairingTimer);
    if (live.reconnectTimer !== null) clearTimeout(live.reconnectTimer);
    this.failQrWaiters(live, 'the pairing attempt ended', endedBy);
    this.releaseSlot(live);
    try {
      live.conn?.close();
    } catch {
      // Closing a connection that is already gone is fine.
    }
  }
}
