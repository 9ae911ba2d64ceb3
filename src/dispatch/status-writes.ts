/**
 * The dispatcher's status writes (dispatcher.ts): `sent`, `failed` (its quota unit back) and the network's receipts,
 * each with its webhook event, group-committed and fenced by the lease epoch they were made under, and retried
 * until they commit (through a store outage). The changes that become events are written together at the end of
 * their batch (announced.ts), their events built from the rows the batch's statements answer.
 *
 * Owns: the writes in flight (the store tells the event log's followers once a commit recorded events).
 * Must never: decide whether a message is sent (the lane does), or write for a device without its epoch.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../clock.js';
import { eventRows, insertEvents, type EventType, type NewEvent } from '../events/record.js';
import type { NetworkEvent } from '../network/network.js';
import type { BatchCollector, FencedWrites, WriteBatch } from '../cluster/fenced-writes.js';
import { LeaseLostError } from '../cluster/holdings.js';
import { untilStored } from '../store/until-stored.js';
import type { Store } from '../store/store.js';
import type { Db } from '../store/schema.js';
import type { MessageRow } from '../messages/repository.js';
import { messageStatusRepository, type ReceiptChange, type SentChange } from '../messages/status-repository.js';
import type { QueuedMessage } from '../messages/queue-span.js';
import { quotaRepository } from '../messages/quota-repository.js';
import { presentMessage } from '../messages/present.js';
import { MEMBER_RECEIPTS } from '../messages/receipts.js';
import type { DeviceCache } from './device-cache.js';
import { announcedChanges, type AnnouncedChange } from './announced.js';

export type StatusEvent = Extract<NetworkEvent, { type: 'message_status' }>;

export interface StatusWritesOptions {
  readonly store: Store;
  readonly writes: FencedWrites;
  readonly clock: Clock;
  readonly logger: FastifyBaseLogger;
  readonly devices: DeviceCache;
  /** Whether the dispatcher is closing: a write not stored by then is given up. */
  readonly closed: () => boolean;
}

export class StatusWrites {
  private readonly pending = new Set<Promise<unknown>>();

  /** The batch's status changes that become events, written together (announced.ts). */
  private readonly announced: BatchCollector<AnnouncedChange>;

  constructor(private readonly options: StatusWritesOptions) {
    this.announced = announcedChanges(options.devices);
  }

  /** Resolves once every write in flight has been stored (or given up). */
  async settled(): Promise<void> {
    while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
  }

  /**
   * A status write retried until it commits: the network already acted, and
   * the store is the only record of it. Given up only when the dispatcher
   * closes; a `sent` not stored then is sent again under the same id after the
   * restart, which the network takes once.
   */
  persist(row: Pick<MessageRow, 'id' | 'device_id'>, write: () => Promise<void>): Promise<void> {
    return this.track(
      untilStored(write, {
        logger: this.options.logger,
        what: 'a message status',
        context: { messageId: row.id, deviceId: row.device_id },
        // A refused write (the device moved to another node) is final: the new holder takes over.
        giveUp: (error) => this.options.closed() || error instanceof LeaseLostError,
      }),
    );
  }

  track(write: Promise<void>): Promise<void> {
    this.pending.add(write);
    void write
      .catch((error: unknown) =>
        this.options.logger.error({ err: error }, 'a message status was not stored before shutdown'),
      )
      .finally(() => this.pending.delete(write));
    return write;
  }

  /** The network took the message: `sent`, with `message.sent` when the device announces it. */
  markSent(
    deviceId: number,
    epoch: number,
    { id, seq }: QueuedMessage,
    hasMedia: boolean,
    renderedAs: string | null,
  ): Promise<void> {
    const at = this.options.clock.now();
    return this.afterWarming(deviceId, () =>
      this.options.writes.run(deviceId, epoch, async (trx, batch) => {
        if (!(await this.announces(trx, deviceId))) {
          // Nothing to announce: written with the batch's other `sent` changes, in one statement.
          if (!hasMedia) return batch.collect(SENT, { id, seq, deviceId, at, renderedAs });
          await messageStatusRepository.markSent(trx, id, at, hasMedia, false, renderedAs);
          return;
        }
        // Written with the batch's other announced changes, its event built from the row the statement answers.
        if (hasMedia) batch.collect(this.announced, { kind: 'sentMedia', id, deviceId, at, renderedAs });
        else batch.collect(this.announced, { kind: 'sent', id, seq, deviceId, at, renderedAs });
      }),
    );
  }

  /** The network took an action (actions.ts): done, with no event (an action is no message). */
  markActionSent(deviceId: number, epoch: number, { id, seq }: QueuedMessage): Promise<void> {
    const at = this.options.clock.now();
    return this.afterWarming(deviceId, () =>
      this.options.writes.run(deviceId, epoch, async (_trx, batch) => {
        batch.collect(SENT, { id, seq, deviceId, at, renderedAs: null });
      }),
    );
  }

  /** The message can never be sent: `failed`, its quota unit back, with `message.failed`. */
  async fail(row: MessageRow, epoch: number, reason: string): Promise<void> {
    const at = this.options.clock.now();
    const ended = await this.afterWarming(row.device_id, () =>
      this.options.writes.run(row.device_id, epoch, async (trx, batch) => {
        const failed = await messageStatusRepository.markFailed(trx, row.id, at, reason);
        if (failed === undefined) return false;
        // An action (actions.ts) took no quota and is no message to announce.
        if (failed.direction === 'action') return true;
        // It never reached the network: its unit of quota comes back, with the batch's others in device order.
        batch.collect(QUOTA_BACK, row.device_id);
        await this.event(trx, batch, failed, 'message.failed', at);
        return true;
      }),
    );
    // Never the content or the recipient: the id finds the message through the API.
    if (ended) this.options.logger.info({ deviceId: row.device_id, messageId: row.id, reason }, 'message failed');
  }

  /** A network receipt for a message of the device held under `epoch`. */
  receipt(deviceId: number, epoch: number, event: StatusEvent): void {
    const at = event.at.getTime();
    if (event.status === 'failed') {
      this.track(this.refused(deviceId, epoch, event.id, at, event.reason));
      return;
    }
    const { id, status, participant } = event;
    void this.persist({ id, device_id: deviceId }, () =>
      this.afterWarming(deviceId, () =>
        this.options.writes.run(deviceId, epoch, async (trx, batch) => {
          // A group member's receipt is kept as the member's; the message itself moves exactly as for a direct one.
          if (participant !== undefined && status !== 'sent') {
            batch.collect(MEMBER_RECEIPTS, { id, deviceId, phone: participant, status, at });
          }
          const change = RECEIPTS[status];
          if (!(await this.announces(trx, deviceId))) {
            // A late ack is rare: written on its own rather than batched.
            if (status === 'sent') await change(trx, deviceId, id, at, false);
            else batch.collect(status === 'delivered' ? DELIVERED : READ, { id, deviceId, at });
            return;
          }
          // With the batch's other announced changes (announced.ts), which also records a `message.sent` the receipt
          // overtook.
          batch.collect(this.announced, { kind: status === 'sent' ? 'acked' : status, id, deviceId, at });
        }),
      ),
    );
  }

  /** A refusal after `sent` ends the message failed, with `message.failed` (docs/internals.md, WhatsApp and sandbox accounts). */
  private refused(deviceId: number, epoch: number, id: string, at: number, reason: string): Promise<void> {
    return this.afterWarming(deviceId, () =>
      this.options.writes.run(deviceId, epoch, async (_trx, batch) => {
        batch.collect(this.announced, { kind: 'refused', id, deviceId, at, reason });
      }),
    );
  }

  /**
   * Runs `write` once the device row its status writes read is in the cache: read before the commit (gathered with
   * other lanes'), not inside it, where each read would hold up the one commit under way. A failed read is left to
   * the write, which then reads the row itself.
   */
  private async afterWarming<T>(deviceId: number, write: () => Promise<T>): Promise<T> {
    await this.options.devices.get(this.options.store.db, deviceId).catch(() => undefined);
    return write();
  }

  /**
   * Whether the device's status changes become events (every live device's do, into the event log): only then is
   * the row read back.
   */
  private async announces(db: Db, deviceId: number): Promise<boolean> {
    const device = await this.options.devices.get(db, deviceId);
    return device !== undefined && device.deleted_at === null;
  }

  private async event(trx: Db, batch: WriteBatch, row: MessageRow, type: EventType, at: number): Promise<void> {
    const device = await this.options.devices.get(trx, row.device_id);
    // A deleted device's deliveries were stopped with it; a receipt arriving later announces nothing.
    if (device === undefined || device.deleted_at !== null) return;
    const event = await eventRows(trx, device, type, presentMessage(row), at);
    // Stored with the other events of the batch, in one insert before the commit.
    batch.collect(EVENTS, event);
  }
}

/** The status change each network receipt makes; `sent` is an ack that came after its wait ran out. */
const RECEIPTS = {
  sent: messageStatusRepository.markAckedLate,
  delivered: messageStatusRepository.markDelivered,
  read: messageStatusRepository.markRead,
} as const;

/**
 * Units of quota coming back (failed messages), given back together at the end of the batch, the devices' rows
 * locked in device order: an acceptance (of another node of a cluster, on PostgreSQL) locks them in that order too,
 * so the two never deadlock.
 */
const QUOTA_BACK: BatchCollector<number> = {
  flush: (trx, deviceIds) => {
    const units = new Map<number, number>();
    for (const id of deviceIds) units.set(id, (units.get(id) ?? 0) + 1);
    return quotaRepository.giveBackMany(trx, units);
  },
};

/** The events of a batch of status writes (log rows and webhook deliveries), inserted together. */
const EVENTS: BatchCollector<NewEvent> = { flush: (trx, events) => insertEvents(trx, events) };

/** Status changes no webhook announces, written together per kind (each only moves a message forward). */
const SENT: BatchCollector<SentChange> = {
  flush: (trx, changes) => messageStatusRepository.changeMany(trx, 'sent', changes),
};
const DELIVERED: BatchCollector<ReceiptChange> = {
  flush: (trx, changes) => messageStatusRepository.changeMany(trx, 'delivered', changes),
};
const READ: BatchCollector<ReceiptChange> = {
  flush: (trx, changes) => messageStatusRepository.changeMany(trx, 'read', changes),
};
