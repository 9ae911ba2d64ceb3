/**
 * The store writes of the connection manager, each fenced by the lease epoch the device is held under
 * (docs/internals.md, Devices and pairing; Clusters): connected or not, a pairing recorded or refused, a pairing
 * window over (EXPIRED), a logout (UNPAIRED, and the queue of that pairing ended), each with its webhook events
 * in the same transaction, and the deletion of network state no pairing kept.
 *
 * Owns: what is written and in which transaction, and letting the lease go once a final write is in. Must
 * never: hold connection state, decide a transition or write for a device this node no longer holds (a write
 * under a lost lease fails with LeaseLostError).
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../clock.js';
import { recordEvent } from '../events/record.js';
import type { NetworkEvent } from '../network/network.js';
import type { Store } from '../store/store.js';
import type { Db } from '../store/schema.js';
import { DeviceUnavailableError, LeaseLostError, type DeviceHoldings } from '../cluster/holdings.js';
import {
  QUEUE_END_BATCH,
  REASON_LOGGED_OUT,
  endQueueBatch,
  endQueueRest,
  type QueueEnd,
} from '../messages/end-queue.js';
import { networkStateRepository } from './network-state.js';
import { devicesRepository } from './repository.js';

export interface DeviceWritesOptions {
  readonly store: Store;
  readonly clock: Clock;
  readonly holdings: DeviceHoldings;
  readonly logger: FastifyBaseLogger;
  readonly serverName: string;
  readonly pairingWindowMs: number;
  readonly pairingNetwork: (accountId: number, db: Db) => Promise<string>;
}

export class DeviceWrites {
  constructor(private readonly options: DeviceWritesOptions) {}

  /** A write for a device, refused unless this node still holds it under `epoch` (in one transaction). */
  fenced<T>(deviceId: number, epoch: number, work: (trx: Db) => Promise<T>): Promise<T> {
    return this.options.store.db.transaction().execute(async (trx) => {
      await this.options.holdings.fence(trx, deviceId, epoch);
      return work(trx);
    });
  }

  /** The epoch this node holds the device under now, or DeviceUnavailableError. */
  heldEpoch(deviceId: number): number {
    const epoch = this.options.holdings.epochOf(deviceId);
    if (epoch === null) throw new DeviceUnavailableError(deviceId);
    return epoch;
  }

  /** The row's `connected`, naming this node when true. */
  setConnected(deviceId: number, epoch: number, connected: boolean): Promise<void> {
    return this.fenced(deviceId, epoch, (trx) =>
      connected
        ? devicesRepository.setConnected(trx, deviceId, true, this.options.serverName)
        : devicesRepository.setConnected(trx, deviceId, false),
    );
  }

  /** A QR asked for an EXPIRED device starts a new attempt: the device is UNPAIRED again. */
  unexpire(accountId: number, deviceId: number, epoch: number): Promise<void> {
    return this.fenced(deviceId, epoch, async (trx) => {
      await devicesRepository.update(trx, accountId, deviceId, {
        paired_status: 'UNPAIRED',
        updated_at: this.options.clock.now(),
      });
    });
  }

  /** Records the pairing with `device.paired`; answers why it is refused instead, or null. */
  async recordPaired(deviceId: number, epoch: number, phone: string, session: string): Promise<string | null> {
    const now = this.options.clock.now();
    const refused = await this.fenced(deviceId, epoch, async (trx) => {
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
      this.options.logger.info({ deviceId, phone }, 'device paired');
    } else {
      this.options.logger.warn({ deviceId, reason: refused }, 'pairing refused');
    }
    return refused;
  }

  /**
   * A refused pairing: the session's stored state goes, and the device stays UNPAIRED, told with
   * `device.disconnected` and the reason; then the lease goes.
   */
  async recordRefusal(deviceId: number, epoch: number, reason: string, session: string): Promise<void> {
    const now = this.options.clock.now();
    await this.fenced(deviceId, epoch, async (trx) => {
      await networkStateRepository.discard(trx, session);
      await devicesRepository.setConnected(trx, deviceId, false);
      const device = await devicesRepository.findById(trx, deviceId);
      if (device === undefined || device.deleted_at !== null || device.paired_status !== 'UNPAIRED') return;
      await recordEvent(
        trx,
        device,
        'device.disconnected',
        { paired_status: 'UNPAIRED', reason: `pairing refused: ${reason}` },
        now,
      );
    }).catch((error: unknown) => {
      this.options.logger.error({ err: error, deviceId }, 'recording the refused pairing failed');
    });
    this.options.holdings.letGo(deviceId);
  }

  /** The pairing window ended with no scan: EXPIRED with `device.qr_expired`; then the lease goes. */
  async recordExpiry(deviceId: number, epoch: number): Promise<void> {
    const now = this.options.clock.now();
    const expired = await this.fenced(deviceId, epoch, async (trx) => {
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
  }

  /**
   * The session is gone: UNPAIRED, and the queue of that pairing ends with it
   * (its messages were accepted for a number this device may no longer have),
   * in the same transaction as far as the first batch goes. `tell` hears the logout once it is written.
   */
  async markLoggedOut(
    deviceId: number,
    epoch: number,
    reason: string,
    tell: (deviceId: number, event: NetworkEvent) => void,
  ): Promise<void> {
    const { db } = this.options.store;
    const now = this.options.clock.now();
    // One logout is recorded twice: by the API's request and by the network's `logged_out` for it. The first lets
    // the lease go, so the second may find it gone; a device no longer PAIRED was logged out, and that is all.
    if (this.options.holdings.epochOf(deviceId) !== epoch && !(await this.stillPaired(deviceId))) return;
    const ended = await this.recordLogout(deviceId, epoch, reason, now).catch(async (error: unknown) => {
      // The other record finished between the look above and this one's fence.
      if (error instanceof LeaseLostError && !(await this.stillPaired(deviceId))) return null;
      throw error;
    });
    if (ended === null) return;
    // Logged out: no connection needed any more, the lease goes.
    this.options.holdings.letGo(deviceId);
    this.options.logger.info({ deviceId, phone: ended.phone, reason }, 'device logged out');
    let failed = ended.first;
    if (failed === QUEUE_END_BATCH) failed += await endQueueRest(db, ended.end, this.options.clock);
    if (failed > 0) {
      this.options.logger.info(
        { deviceId, count: failed, reason: REASON_LOGGED_OUT },
        'queued messages failed: the pairing they were accepted for ended',
      );
    }
    tell(deviceId, { type: 'logged_out', reason });
  }

  private async stillPaired(deviceId: number): Promise<boolean> {
    const device = await devicesRepository.findById(this.options.store.db, deviceId);
    return device !== undefined && device.deleted_at === null && device.paired_status === 'PAIRED';
  }

  /** The logout's writes, fenced: null when there was nothing to log out (gone, or logged out already). */
  private recordLogout(deviceId: number, epoch: number, reason: string, now: number) {
    return this.fenced(deviceId, epoch, async (trx) => {
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
  }

  /**
   * Network state of pairing attempts that never became a device's (the process stopped during one) is
   * deleted once it is well past any pairing window: an attempt still running elsewhere is younger.
   */
  async discardOrphanedState(stopped: () => boolean): Promise<void> {
    const { db } = this.options.store;
    const before = this.options.clock.now() - Math.max(3_600_000, 2 * this.options.pairingWindowMs);
    try {
      for (;;) {
        const sessions = await networkStateRepository.orphans(db, before, 100);
        for (const session of sessions) {
          await db.transaction().execute((trx) => networkStateRepository.discard(trx, session));
        }
        if (sessions.length < 100 || stopped()) return;
      }
    } catch (error) {
      this.options.logger.warn({ err: error }, 'deleting orphaned network state failed');
    }
  }
}
