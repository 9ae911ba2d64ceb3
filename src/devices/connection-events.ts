/**
 * What a network event does to a device held here (docs/internals.md, Devices and pairing): a QR code shown, a
 * pairing recorded or refused, a connection opened, dropped (and reconnected after a backoff) or logged out, each
 * through a transition of src/devices/connection-state.ts and with its write (src/devices/device-writes.ts).
 *
 * Owns: the reading of one event against the device's state, and which listeners hear it. Must never: hold a
 * table of devices, set a timer or open a connection (the connection manager does, behind ConnectionHost), or
 * apply an event out of order (the manager chains each device's events).
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../clock.js';
import type { NetworkEvent, ReconnectHint } from '../network/network.js';
import { storeFault } from '../store/faults.js';
import {
  failQrWaiters,
  isIn,
  showQr,
  toConnecting,
  toDropped,
  toOpen,
  type Connecting,
  type Dropped,
  type Ended,
  type Live,
  type Opening,
  type Pairing,
} from './connection-state.js';
import type { DeviceWrites } from './device-writes.js';
import { QrUnavailableError } from './pairing-attempts.js';
import { STABLE_MS, type ReconnectPolicy } from './reconnect-policy.js';

/** What the connection manager lends the events: its table, its drops and its reconnects. */
export interface ConnectionHost {
  /** The device's live record here, if any. */
  current(deviceId: number): Live | undefined;
  drop(deviceId: number, endedBy?: QrUnavailableError['endedBy'], letGo?: boolean): void;
  /** Schedules the next connect after the backoff; answers its delay. */
  scheduleReconnect(deviceId: number, live: Live<Dropped | Opening>, hint?: ReconnectHint): number;
  /** Paired devices being re-established because of the store (see ConnectionManager). */
  readonly recovering: Set<number>;
  closed(): boolean;
  tell(deviceId: number, event: NetworkEvent): void;
}

export interface ConnectionEventsDeps {
  readonly logger: FastifyBaseLogger;
  /** When a connection opened and dropped (a stable one starts the backoff again): the reconnect timers' clock. */
  readonly clock: Clock;
  readonly writes: DeviceWrites;
  readonly policy: ReconnectPolicy;
}

export class ConnectionEvents {
  constructor(
    private readonly host: ConnectionHost,
    private readonly deps: ConnectionEventsDeps,
  ) {}

  /** A phone confirmed the pairing; heard also when the attempt ended here since (the phone is linked all the same). */
  private async onPaired(deviceId: number, live: Live<Pairing | Ended>, phone: string, session: string): Promise<void> {
    const conn = live.state.kind === 'pairing' ? live.state.conn : live.state.last;
    const refused = await this.deps.writes.recordPaired(deviceId, live.epoch, phone, session);
    if (refused === null) {
      if (isIn(live, 'pairing')) toConnecting(live, live.state.conn, live.generation);
      return;
    }
    // The phone must not pair with this device: it is unlinked on the network (once the connection is open).
    await conn
      ?.logout()
      .catch((error: unknown) =>
        this.deps.logger.warn({ err: error, deviceId }, 'unlinking the refused phone failed; its session is deleted'),
      );
    // The lease is kept until the refusal is written under it.
    this.host.drop(deviceId, null, false);
    await this.deps.writes.recordRefusal(deviceId, live.epoch, refused, session);
  }

  /** One network event of the device's current connection (or of one dropped here since it was received). */
  async apply(deviceId: number, live: Live, event: NetworkEvent): Promise<void> {
    switch (event.type) {
      case 'qr':
        if (isIn(live, 'pairing')) showQr(live, event.qr);
        return;
      case 'paired':
        if (isIn(live, 'pairing') || (isIn(live, 'ended') && live.state.was === 'pairing')) {
          await this.onPaired(deviceId, live, event.phone, event.session);
        }
        return;
      case 'connected':
        // Only a connection with a session opens (one dropped here meanwhile, or a refused pairing, is not open).
        if (this.host.current(deviceId) !== live || !isIn(live, 'connecting')) return;
        await this.opened(deviceId, live);
        break;
      case 'disconnected':
        if (isIn(live, 'pairing') || (isIn(live, 'ended') && live.state.was === 'pairing')) {
          this.deps.logger.info(
            { deviceId, reason: event.reason },
            'pairing attempt ended: the network is unavailable',
          );
          const error = () => new QrUnavailableError(`the network is unavailable (${event.reason})`);
          if (isIn(live, 'pairing')) failQrWaiters(live.state, error);
          if (this.host.current(deviceId) === live) this.host.drop(deviceId);
          return;
        }
        await this.droppedByNetwork(deviceId, live, event.reason, event.retry ?? 'backoff');
        break;
      case 'logged_out':
        this.host.recovering.delete(deviceId);
        if (this.host.current(deviceId) === live) this.host.drop(deviceId);
        // Tells the listeners itself, also for a logout asked through the API.
        return this.deps.writes.markLoggedOut(deviceId, live.epoch, event.reason, this.host.tell);
      default:
        break;
    }
    this.host.tell(deviceId, event);
  }

  private async opened(deviceId: number, live: Live<Connecting>): Promise<void> {
    this.deps.policy.connected(deviceId);
    this.host.recovering.delete(deviceId);
    const { retry } = toOpen(live, this.deps.clock.now()).state;
    // The backoff is not reset yet: a connection that drops again at once is flapping (see toDropped).
    if (retry.failures > 0) this.deps.logger.info({ deviceId, attempts: retry.failures }, 'device reconnected');
    else this.deps.logger.info({ deviceId }, 'device connected');
    try {
      await this.deps.writes.setConnected(deviceId, live.epoch, true);
    } catch (error) {
      if (storeFault(error) === null) throw error;
      // Open all the same: this node sends through it; the row says so at the next connect.
      this.deps.logger.warn(
        { deviceId, fault: storeFault(error)?.code },
        'device connected, but the store did not take the write',
      );
    }
  }

  /** The network refused or dropped a session's connection: not connected, whatever the store did before. */
  private async droppedByNetwork(deviceId: number, live: Live, reason: string, hint: ReconnectHint): Promise<void> {
    if (isIn(live, 'connecting', 'open')) toDropped(live, this.deps.clock.now(), STABLE_MS);
    this.host.recovering.delete(deviceId);
    try {
      await this.deps.writes.setConnected(deviceId, live.epoch, false);
    } catch (error) {
      if (storeFault(error) === null) throw error;
      // The store did not take the write: the reconnect below must happen all the same (it used not to).
      this.host.recovering.add(deviceId);
      this.deps.logger.warn(
        { deviceId, fault: storeFault(error)?.code },
        'device connection dropped while the store is out of service; reconnecting',
      );
    }
    this.deps.policy.logDrop(deviceId, reason, hint);
    if (this.host.current(deviceId) !== live || !isIn(live, 'dropped') || this.host.closed()) return;
    const delayMs = this.host.scheduleReconnect(deviceId, live, hint);
    const { retry } = live.state;
    this.deps.logger.info(
      { deviceId, reason, attempt: retry.failures, reconnectInMs: Math.round(delayMs) },
      'device connection dropped; reconnecting',
    );
    this.deps.policy.warnIfLooping(deviceId, retry);
  }
}
