/**
 * Live network connections of the devices this node holds (docs/internals.md, Devices and pairing).
 *
 * Owns: the table of live devices, each an explicit state (src/devices/connection-state.ts, where the table of
 * states and events is), and turning network events and API calls into the transitions there: pairing attempts
 * (current QR, pairing window, EXPIRED), PAIRED, connected and logged out (written with their webhook events by
 * src/devices/device-writes.ts), reconnecting dropped devices with backoff (src/devices/reconnect-policy.ts) under
 * a cap on simultaneous connects (src/devices/connect-slots.ts), and reconnecting every paired device after a
 * restart from its stored session.
 *
 * A paired device whose connection is being re-established because of the store (this node's lease ran out
 * while the store did not answer, or the store failed a step of the reconnect) is `recovering` until its
 * connection opens or the network itself refuses it: sends answer 503 with Retry-After meanwhile, not 400
 * `Device not connected` (docs/hardening.md).
 *
 * Which devices it connects is the cluster's to say (src/cluster/): it connects a device when the cluster says
 * it is held here and drops it at once when it is not; every state write carries the lease epoch the device was
 * held under, so a node that lost the device writes nothing for it.
 *
 * Must never: hold the only copy of anything (the store is the truth; this is a cache of sockets and timers, a
 * few hundred bytes per device), change a device's state other than through a transition of connection-state.ts,
 * let a stale connection's late events change state (each connection has a generation number), connect a
 * device the cluster does not hold here, or wait for time except on the injected clock (the pairing window and
 * the reconnect backoff are its timers; a first connect runs at once, after the current turn).
 */
import type { Timer } from '../clock.js';
import type { Network, NetworkConnection, NetworkEvent, ReconnectHint } from '../network/network.js';
import { DeviceUnavailableError, LeaseLostError, type LossCause } from '../cluster/holdings.js';
import { storeFault } from '../store/faults.js';
import { ConnectSlots } from './connect-slots.js';
import {
  connectionOf,
  isIn,
  isLive,
  startPairing,
  startSession,
  toConnecting,
  toEnded,
  toOpening,
  toQueued,
  toScheduled,
  type Dropped,
  type Live,
  type Opening,
  type Pairing,
  type Slot,
} from './connection-state.js';
import { ConnectionEvents } from './connection-events.js';
import { DeviceWrites } from './device-writes.js';
import { settled } from './settle.js';
import { QrUnavailableError, firstQr, pairingCodeOf } from './pairing-attempts.js';
import { ReconnectPolicy } from './reconnect-policy.js';
import type { ConnectionManagerOptions } from './connection-options.js';
import { devicesRepository, type DeviceRow } from './repository.js';
import type { DeviceConnections } from './service.js';

export { QrUnavailableError } from './pairing-attempts.js';
export type { ConnectionManagerOptions } from './connection-options.js';

/** Runs `fn` after the current turn of the event loop: no time passes by any clock's rules. */
function atOnce(fn: () => void): Timer {
  const handle = setTimeout(fn, 0);
  return { cancel: () => clearTimeout(handle) };
}

/** Events other features listen to (message receipts, incoming messages, group changes, connection open). */
export type DeviceNetworkListener = (deviceId: number, event: NetworkEvent) => void;

export class ConnectionManager implements DeviceConnections {
  private readonly live = new Map<number, Live>();
  /** Paired devices whose connection is being re-established because of the store (see the header). */
  private readonly recovering = new Set<number>();
  private readonly listeners = new Set<DeviceNetworkListener>();
  private generation = 0;
  private closed = false;
  private readonly qrWaitMs: number;
  private readonly slots: ConnectSlots;
  private readonly policy: ReconnectPolicy;
  private readonly writes: DeviceWrites;
  private readonly events: ConnectionEvents;

  constructor(private readonly options: ConnectionManagerOptions) {
    this.qrWaitMs = options.qrWaitMs ?? 10_000;
    this.slots = new ConnectSlots(options.maxConcurrentConnects ?? 16);
    this.policy = new ReconnectPolicy(options);
    this.writes = new DeviceWrites(options);
    this.events = new ConnectionEvents(
      {
        current: (deviceId) => this.live.get(deviceId),
        drop: (deviceId, endedBy, letGo) => this.drop(deviceId, endedBy, letGo),
        scheduleReconnect: (deviceId, live, hint) => this.scheduleReconnect(deviceId, live, hint),
        recovering: this.recovering,
        closed: () => this.closed,
        tell: this.tell,
      },
      { logger: options.logger, clock: options.clock, writes: this.writes, policy: this.policy },
    );
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
      for (const id of paired) this.connectSession(id, 0);
    }
    void this.writes.discardOrphanedState(() => this.closed);
  }

  /** The cluster made this node the device's holder: connect it from its stored session. */
  private adopt(deviceId: number, epoch: number): void {
    if (this.closed) return;
    const live = this.live.get(deviceId);
    if (live !== undefined && live.epoch === epoch) return;
    if (live !== undefined) this.drop(deviceId);
    this.connectSession(deviceId, epoch);
  }

  /** The device is no longer held here: its connection closes, and its lease goes once the writes it began are over. */
  private async forget(deviceId: number, cause?: LossCause): Promise<void> {
    const live = this.live.get(deviceId);
    // A lease that ran out because the store did not answer is taken back here once it answers again.
    if (cause === 'expired' && live !== undefined && !isIn(live, 'pairing')) this.recovering.add(deviceId);
    else this.recovering.delete(deviceId);
    if (live === undefined) return;
    const conn = connectionOf(live.state);
    this.drop(deviceId);
    // Not fenced (the lease is gone): only while the row still names this node, never over the new holder's.
    void devicesRepository
      .setDisconnectedIfServer(this.options.store.db, deviceId, this.options.serverName)
      .catch(() => undefined);
    await settled([conn]);
  }

  /** The open connection of a device, or null. */
  connection(deviceId: number): NetworkConnection | null {
    const live = this.live.get(deviceId);
    if (live === undefined || !isIn(live, 'open')) return null;
    // Not held here any more (or this node's lease ran out): nothing may be sent through it.
    return this.options.holdings.epochOf(deviceId) === live.epoch ? live.state.conn : null;
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
    if (live === undefined || !isIn(live, 'pairing')) {
      // The attempt runs where the device is held; a device nobody holds is taken here for it.
      const epoch =
        this.options.holdings.epochOf(device.id) ?? (await this.options.holdings.claimForPairing(device.id));
      if (epoch === null) throw new DeviceUnavailableError(device.id);
      this.drop(device.id);
      live = this.startPairing(device, epoch);
      if (device.paired_status === 'EXPIRED') await this.writes.unexpire(device.account_id, device.id, epoch);
    }
    if (!isIn(live, 'pairing')) throw new QrUnavailableError('the pairing attempt ended');
    return live.state.qr ?? firstQr(live.state, this.qrWaitMs);
  }

  /** When the running pairing attempt of a device ends (epoch ms), or null when none runs here. */
  pairingEndsAt(deviceId: number): number | null {
    const live = this.live.get(deviceId);
    return live !== undefined && isIn(live, 'pairing') ? live.state.endsAt : null;
  }

  /**
   * Drops the device's connection and opens it again (API `POST /devices/{id}/restart`).
   * A paired device reconnects from its stored session at once; a running pairing
   * attempt is ended (the next QR request starts a fresh one, with a new window).
   */
  async restart(device: DeviceRow): Promise<void> {
    this.drop(device.id);
    if (device.paired_status !== 'PAIRED' || device.network_session === null) return;
    const epoch = this.writes.heldEpoch(device.id);
    // Written before the new connection opens, so its `connected` always lands after this.
    await this.writes.setConnected(device.id, epoch, false);
    this.connectSession(device.id, epoch);
  }

  /**
   * A pairing code for `phone` in the device's pairing attempt (starting one if none runs). The
   * network is asked once the attempt is ready for pairing, i.e. after its first QR code.
   */
  async pairingCode(device: DeviceRow, phone: string): Promise<string> {
    await this.currentQr(device);
    const live = this.live.get(device.id);
    if (live === undefined || !isIn(live, 'pairing')) throw new QrUnavailableError('the pairing attempt ended');
    return pairingCodeOf(live.state.conn, phone, this.qrWaitMs);
  }

  /** Ends the device's connection here; with `logout`, its network session too. */
  async release(deviceId: number, { logout }: { logout: boolean }): Promise<void> {
    await this.end(deviceId, logout);
    const epoch = this.options.holdings.epochOf(deviceId);
    // Not held here: the holder drops it when it sees the device needs no connection.
    if (epoch === null) return;
    // Dropped quietly (no `disconnected` event from a dropped connection): the row must say so itself.
    try {
      await this.writes.setConnected(deviceId, epoch, false);
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
    else this.connectSession(deviceId, epoch);
  }

  /**
   * Logs a device out (API `POST /devices/{id}/logout`): the session ends and
   * the device is UNPAIRED. The row goes from connected to UNPAIRED in one
   * write, so a reader never sees "paired but offline" in between.
   */
  async logout(device: DeviceRow): Promise<void> {
    // Nothing stored to end: only a pairing attempt (if one runs here) stops.
    if (device.paired_status !== 'PAIRED') return this.end(device.id, true);
    const epoch = this.writes.heldEpoch(device.id);
    await this.end(device.id, true);
    await this.writes.markLoggedOut(device.id, epoch, 'logout requested through the API', this.tell);
  }

  /** Ends the connection here; with `logout`, its session on the network too. */
  private async end(deviceId: number, logout: boolean): Promise<void> {
    const live = this.live.get(deviceId);
    if (logout && live !== undefined && isIn(live, 'open')) {
      // An offline device cannot be logged out on the network; its stored session is forgotten all the same.
      await live.state.conn
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
    this.slots.close();
    const chains = [...this.live.values()].map((live) => live.chain);
    const connections = [...this.live.values()].map((live) => connectionOf(live.state));
    for (const id of [...this.live.keys()]) this.drop(id);
    await Promise.all(chains);
    // Before the cluster hands the devices on: what the connections were still writing lands first.
    await settled(connections);
    // Dropped quietly: the rows say so themselves (another node sets them again when it connects them).
    await devicesRepository.clearConnectedOf(this.options.store.db, this.options.serverName).catch(() => undefined);
  }

  private readonly tell = (deviceId: number, event: NetworkEvent): void => {
    for (const listener of this.listeners) listener(deviceId, event);
  };

  // --- pairing -------------------------------------------------------------

  private startPairing(device: DeviceRow, epoch: number): Live<Pairing> {
    const generation = ++this.generation;
    // The window ends on the clock that says when it ends (a test moves it instead of waiting).
    const { clock, pairingWindowMs } = this.options;
    const endsAt = clock.now() + pairingWindowMs;
    const timer = clock.after(pairingWindowMs, () => this.expirePairing(device.id, generation));
    // The account's view of the sandbox's phones (other networks ignore it).
    const options = { deviceId: device.id, session: null, expectedPhone: device.expected_phone };
    return this.connectNow({ ...options, view: String(device.account_id) }, generation, (conn) => {
      const live = startPairing(generation, epoch, { conn, timer, endsAt });
      this.live.set(device.id, live);
      return live;
    });
  }

  /**
   * Connects under `generation`; `enter` records the connection in its state. Events the network hands over
   * while connect() runs are applied once it is recorded, in order.
   */
  private connectNow<T>(
    options: Parameters<Network['connect']>[0],
    generation: number,
    enter: (conn: NetworkConnection) => T,
  ): T {
    let early: NetworkEvent[] | null = [];
    const conn = this.options.network.connect(options, (event) => {
      if (early === null) this.enqueue(options.deviceId, generation, event);
      else early.push(event);
    });
    const entered = enter(conn);
    const heard = early;
    early = null;
    for (const event of heard) this.enqueue(options.deviceId, generation, event);
    return entered;
  }

  private expirePairing(deviceId: number, generation: number): void {
    const live = this.live.get(deviceId);
    if (live === undefined || live.generation !== generation || !isIn(live, 'pairing')) return;
    // The lease is kept until the expiry is written under it.
    this.drop(deviceId, null, false);
    void this.serial(live, () => this.writes.recordExpiry(deviceId, live.epoch));
  }

  // --- sessions and reconnects --------------------------------------------

  /** A paired device not live here connects from its stored session (at once, after a free slot). */
  private connectSession(deviceId: number, epoch: number): void {
    if (this.closed) return;
    // At once, not a wait on time: after this turn, so the state is recorded before the timer can fire.
    const live: Live = startSession(
      ++this.generation,
      epoch,
      atOnce(() => this.queue(deviceId, live)),
    );
    this.live.set(deviceId, live);
  }

  /** Schedules the next attempt with backoff, no sooner than `hint` allows; answers its delay. */
  private scheduleReconnect(deviceId: number, live: Live<Dropped | Opening>, hint?: ReconnectHint): number {
    const delayMs = this.policy.nextDelay(live.state.retry, hint);
    // On the injected clock: a test moves it past the backoff instead of waiting for it.
    toScheduled(
      live,
      this.options.clock.after(delayMs, () => this.queue(deviceId, live)),
    );
    return delayMs;
  }

  private queue(deviceId: number, live: Live): void {
    if (!isIn(live, 'scheduled')) return;
    toQueued(live);
    this.slots.acquire((slot) => void this.openSession(deviceId, live, slot));
  }

  private async openSession(deviceId: number, live: Live, slot: Slot): Promise<void> {
    if (this.closed || this.live.get(deviceId) !== live || !isIn(live, 'queued')) return slot.release();
    const opening = toOpening(live, slot);
    if (this.options.holdings.epochOf(deviceId) !== live.epoch) {
      // Taken over (or this node's lease ran out) while waiting for a slot.
      return this.drop(deviceId);
    }
    let device: DeviceRow | undefined;
    try {
      device = await devicesRepository.findById(this.options.store.db, deviceId);
    } catch (error) {
      // Dropped meanwhile: its slot went back with it.
      if (this.live.get(deviceId) !== opening || !isIn(opening, 'opening')) return;
      if (storeFault(error) === null) return this.drop(deviceId);
      // The store did not answer: the device is still paired, so it is tried again (it used to be dropped for good).
      this.recovering.add(deviceId);
      this.scheduleReconnect(deviceId, opening);
      return;
    }
    if (this.live.get(deviceId) !== opening || !isIn(opening, 'opening')) return;
    if (
      device === undefined ||
      device.network_session === null ||
      device.deleted_at !== null ||
      device.status !== 'ACTIVE'
    ) {
      this.recovering.delete(deviceId);
      return this.drop(deviceId);
    }
    const generation = ++this.generation;
    this.connectNow(
      { deviceId, session: device.network_session, view: String(device.account_id) },
      generation,
      (conn) => toConnecting(opening, conn, generation),
    );
  }

  // --- events ---------------------------------------------------------------

  private enqueue(deviceId: number, generation: number, event: NetworkEvent): void {
    const live = this.live.get(deviceId);
    if (live === undefined || live.generation !== generation) {
      // A message the network handed to a connection that has since ended was receipted already: it is the
      // device's all the same, and must reach the store (docs/whatsapp.md, Nothing received is lost).
      if (event.type === 'incoming_message') this.tell(deviceId, event);
      return;
    }
    void this.serial(live, () => this.events.apply(deviceId, live, event));
  }

  private serial(live: Live, work: () => Promise<void>): Promise<void> {
    live.chain = live.chain.then(work).catch((error: unknown) => {
      // A refused write means the device moved to another node: the cluster drops it here; nothing to log twice.
      if (error instanceof LeaseLostError) return;
      this.options.logger.error({ err: error }, 'applying a network event failed');
    });
    return live.chain;
  }

  /** Forgets the device here: closes its connection quietly and clears its timers. */
  private drop(deviceId: number, endedBy: QrUnavailableError['endedBy'] = null, letGo = true): void {
    // Ended on purpose (logout, deletion, suspension): nothing is being re-established.
    if (endedBy === 'release') this.recovering.delete(deviceId);
    const live = this.live.get(deviceId);
    if (live === undefined || !isLive(live)) return;
    this.live.delete(deviceId);
    const from = toEnded(live, () => new QrUnavailableError('the pairing attempt ended', endedBy));
    // A pairing attempt that ends unpaired needs the device no longer here.
    if (from.kind === 'pairing' && letGo) this.options.holdings.letGo(deviceId);
  }
}
