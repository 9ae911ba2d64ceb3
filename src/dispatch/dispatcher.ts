/**
 * The outbound queue worker (docs/internals.md, Sending): turns committed `pending` messages
 * into network sends, per device, in acceptance order.
 *
 * State machine of one message (stored in `messages.status`):
 *   pending --network took it--> sent --receipt--> delivered (read_at set by a read receipt)
 *   pending --permanent refusal, or retry budget / 24 h spent--> failed (quota unit given back)
 *   pending --transient failure--> pending (attempts+1, next_attempt_at = now + backoff)
 * Receipts may overtake the `sent` write; every update only moves forward.
 *
 * One lane per device holding a connection on this node: it sends the head of
 * the device's queue, waits `send_interval` between sends, shows typing first
 * when asked, and blocks behind a head that waits for its retry (order is kept).
 * A retry reuses the message id, which is also the network id, so the
 * recipient never sees a message twice; after a crash, messages whose `sent`
 * was not yet written are sent again under the same id for the same reason.
 * An outcome (`sent`, `failed` with its quota unit back, a receipt) is retried
 * until it commits, through a store outage; the lane takes the next message
 * only once the outcome of the one before is stored.
 *
 * Lanes that read at the same moment share the statement (queue-reads.ts): one
 * read of the queue heads and one of the device rows (the guard's view) for all
 * of them, never a cache.
 *
 * Lanes run only for devices the cluster holds here (src/cluster/): before each
 * send the lane asks for the device's lease epoch, and every outcome is written
 * fenced by it; a refused write means the device moved to another node, and
 * the lane stops at once (the new holder sends again, under the same ids, what
 * was sent here but not recorded).
 *
 * Must never: send a message of one device out of order, send for a device not
 * held here, or hold the only copy of anything (a lane is a cursor and a timer;
 * the store has the queue).
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../clock.js';
import type { ConnectionManager } from '../devices/connections.js';
import { devicesRepository, type DeviceRow } from '../devices/repository.js';
import type { Db } from '../store/schema.js';
import { eventRow, insertEvents, type EventRow, type EventType } from '../events/record.js';
import {
  NetworkSendError,
  NetworkUnavailableError,
  type NetworkConnection,
  type NetworkEvent,
} from '../network/network.js';
import type { BatchCollector, FencedWrites, WriteBatch } from '../cluster/fenced-writes.js';
import { untilStored } from '../store/until-stored.js';
import { QueueReads } from './queue-reads.js';
import type { Store } from '../store/store.js';
import { LeaseLostError, type DeviceHoldings } from '../cluster/holdings.js';
import { messagesRepository, type MessageRow } from '../messages/repository.js';
import { presentMessage } from '../messages/present.js';
import { REASON_DELETED, REASON_LOGGED_OUT } from '../messages/end-queue.js';
import { networkContent, networkReplyContext } from '../messages/service.js';
import { storedMedia } from '../messages/stored-media.js';

export interface DispatcherOptions {
  readonly store: Store;
  /** Status writes, group-committed and fenced by the lease epoch they were made under. */
  readonly writes: FencedWrites;
  readonly clock: Clock;
  readonly connections: ConnectionManager;
  /** Whether a device is held here, under which epoch, and the fence of its writes. */
  readonly holdings: DeviceHoldings;
  readonly logger: FastifyBaseLogger;
  /** Default gap between two sends of one device; a device's own `send_interval_ms` wins. */
  readonly sendIntervalMs: number;
  readonly maxAttempts?: number;
  readonly retryBaseMs?: number;
  readonly retryMaxMs?: number;
  readonly maxQueuedMs?: number;
  /** Called after a status write that recorded webhook events has committed (wakes the deliverer). */
  readonly onEventsRecorded?: () => void;
}

interface Lane {
  running: boolean;
  wake: boolean;
  /**
   * Something may be in the store that the buffer does not hold: set by every
   * notify, by a full read (more may follow) and by a retry. Without it the
   * lane does not read the queue again, which halves the reads when messages
   * trickle in one at a time.
   */
  stale: boolean;
  /** seq of the last message this lane finished with (sent or failed). */
  cursor: number;
  buffer: MessageRow[];
  timer: NodeJS.Timeout | null;
  lastSentAt: number;
  intervalMs: number | null;
  /** The run under way, if any (a device handed to another node waits for it). */
  current: Promise<void> | null;
}

const MEDIA_TYPES = new Set(['image', 'video', 'audio', 'file']);
const INTERACTIVE_TYPES = new Set(['list', 'template']);
const DEVICE_CACHE_MS = 1000;
const BATCH = 100;
/** How often a suspended device's lane looks whether it was made active again (e.g. by the CLI, another process). */
const SUSPENDED_RECHECK_MS = 1000;
/** `failed_reason` of a message that waited on a suspended device past the queue's time limit (24 h). */
export const REASON_SUSPENDED_TOO_LONG = 'device suspended for longer than a message may stay queued';

/** Typing shown before a message grows with its text: 50 ms a character, between 1 and 5 s. */
export function typingDurationMs(text: string | null): number {
  return Math.min(5000, Math.max(1000, 50 * [...(text ?? '')].length));
}

export class Dispatcher {
  private readonly lanes = new Map<number, Lane>();
  private readonly writes = new Set<Promise<unknown>>();
  private readonly deviceCache = new Map<number, { row: DeviceRow; at: number }>();
  private closed = false;
  /** A status write of the batch being committed recorded a webhook event. */
  private eventsRecorded = false;
  private unsubscribe: (() => void) | null = null;
  private readonly maxAttempts: number;
  private readonly retryBaseMs: number;
  private readonly retryMaxMs: number;
  private readonly maxQueuedMs: number;
  /** The lanes' queue and guard reads, gathered across lanes asking at once. */
  private readonly reads: QueueReads;

  constructor(private readonly options: DispatcherOptions) {
    this.reads = new QueueReads(options.store.db, BATCH);
    this.maxAttempts = options.maxAttempts ?? 12;
    this.retryBaseMs = options.retryBaseMs ?? 2_000;
    this.retryMaxMs = options.retryMaxMs ?? 10 * 60_000;
    this.maxQueuedMs = options.maxQueuedMs ?? 24 * 60 * 60_000;
  }

  start(): void {
    const offEvents = this.options.connections.onEvent((deviceId, event) => this.onNetworkEvent(deviceId, event));
    const offHoldings = this.options.holdings.subscribe({
      lost: (deviceId) => this.forget(deviceId),
      changed: (deviceId) => this.deviceChanged(deviceId),
      work: (deviceIds) => {
        for (const deviceId of deviceIds) this.notify(deviceId);
      },
    });
    this.unsubscribe = () => {
      offEvents();
      offHoldings();
    };
  }

  /**
   * The device is no longer held here: its lane forgets what it read and stops; resolves once a
   * send under way (and the write of its outcome) is over, so the next holder starts after it.
   */
  private async forget(deviceId: number): Promise<void> {
    const lane = this.lanes.get(deviceId);
    if (lane === undefined) return;
    this.reset(lane);
    await lane.current?.catch(() => undefined);
    this.deviceCache.delete(deviceId);
  }

  private reset(lane: Lane): void {
    if (lane.timer !== null) clearTimeout(lane.timer);
    lane.timer = null;
    lane.buffer = [];
    lane.stale = true;
    lane.cursor = 0;
    lane.wake = false;
  }

  /** A message was committed for this device (or its connection opened): move its queue. */
  notify(deviceId: number): void {
    if (this.closed) return;
    let lane = this.lanes.get(deviceId);
    if (lane === undefined) {
      lane = {
        running: false,
        wake: false,
        stale: true,
        cursor: 0,
        buffer: [],
        timer: null,
        lastSentAt: 0,
        intervalMs: null,
        current: null,
      };
      this.lanes.set(deviceId, lane);
    }
    lane.stale = true;
    void this.run(deviceId, lane);
  }

  /** The device's settings changed: its send interval is read again before the next send. */
  deviceChanged(deviceId: number): void {
    this.deviceCache.delete(deviceId);
    const lane = this.lanes.get(deviceId);
    if (lane === undefined) return;
    lane.intervalMs = null;
    // A suspended device made active again (or any change of its sender) is looked at now, not at the next check.
    lane.stale = true;
    void this.run(deviceId, lane);
  }

  /** Stops taking new work, lets each lane finish the send it is in, and waits for every status write. */
  async close(): Promise<void> {
    this.closed = true;
    this.unsubscribe?.();
    for (const lane of this.lanes.values()) if (lane.timer !== null) clearTimeout(lane.timer);
    while ([...this.lanes.values()].some((lane) => lane.running) || this.writes.size > 0) {
      await Promise.allSettled([...this.writes]);
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  // --- lanes ----------------------------------------------------------------------

  private async run(deviceId: number, lane: Lane): Promise<void> {
    if (lane.running) {
      lane.wake = true;
      return;
    }
    lane.running = true;
    const current = this.drive(deviceId, lane);
    lane.current = current;
    try {
      await current;
    } catch (error) {
      if (error instanceof LeaseLostError) {
        // The device moved to another node (the cluster drops it here too): nothing more to do for it.
        this.reset(lane);
      } else {
        this.options.logger.error({ err: error, deviceId }, 'dispatch lane failed; retrying shortly');
        this.schedule(deviceId, lane, 1000);
      }
    } finally {
      lane.current = null;
      lane.running = false;
      if (lane.wake && !this.closed) {
        lane.wake = false;
        void this.run(deviceId, lane);
      }
    }
  }

  private async drive(deviceId: number, lane: Lane): Promise<void> {
    for (;;) {
      lane.wake = false;
      if (this.closed) return;
      // Asked before every send: a device taken over, or a lease this node could not renew, stops the lane.
      const epoch = this.options.holdings.epochOf(deviceId);
      if (epoch === null) return this.reset(lane);
      const conn = this.options.connections.connection(deviceId);
      if (conn === null) return; // woken again when the device connects
      if (lane.buffer.length === 0) {
        if (!lane.stale) return;
        lane.stale = false;
        lane.buffer = await this.reads.pendingAfter(deviceId, lane.cursor);
        if (lane.buffer.length === BATCH) lane.stale = true;
        if (lane.buffer.length === 0) continue;
      }
      const head = lane.buffer[0]!;
      const now = Date.now();
      if (head.next_attempt_at > now) return this.schedule(deviceId, lane, head.next_attempt_at - now);
      lane.intervalMs ??= await this.intervalOf(deviceId);
      const wait = lane.lastSentAt + lane.intervalMs - now;
      if (wait > 0) return this.schedule(deviceId, lane, wait);
      const sender = await this.senderFor(deviceId, head);
      if (sender === 'suspended') {
        // A suspended device's queue waits, but no longer than any queued message may (docs/internals.md, Sending).
        if (Date.now() - head.created_at < this.maxQueuedMs) return this.schedule(deviceId, lane, SUSPENDED_RECHECK_MS);
        await this.persist(head, () => this.fail(head, epoch, REASON_SUSPENDED_TOO_LONG));
        lane.buffer.shift();
        lane.cursor = head.seq;
        continue;
      }
      if (sender !== 'same') {
        // Accepted for a sender this device no longer is: it ends here, never leaves from another number.
        await this.persist(head, () => this.fail(head, epoch, sender));
        lane.buffer.shift();
        lane.cursor = head.seq;
        continue;
      }
      const { outcome, stored } = await this.sendOne(conn, head, epoch);
      if (outcome === 'retry') {
        lane.buffer = [];
        lane.stale = true;
        continue;
      }
      if (outcome === 'sent') lane.lastSentAt = Date.now();
      // The lane moves past a message only once its outcome is in the store (retried through an outage).
      await stored;
      lane.buffer.shift();
      lane.cursor = head.seq;
    }
  }

  private schedule(deviceId: number, lane: Lane, delayMs: number): void {
    if (this.closed) return;
    if (lane.timer !== null) clearTimeout(lane.timer);
    lane.timer = setTimeout(
      () => {
        lane.timer = null;
        void this.run(deviceId, lane);
      },
      Math.max(0, Math.ceil(delayMs)),
    );
  }

  /**
   * The send-time guard: whether the device may send this message now. A
   * suspended device waits (its queue resumes when it is made active again);
   * a message accepted for another number than the device's current one, or
   * for a device since deleted, can never be sent (the logout or deletion
   * normally ended it already; this holds when one raced a send or a crash
   * cut the ending short). Read fresh before every send, not from the
   * device cache: a suspension made by the CLI (another process) must stop
   * even a queue sent with no interval at once, not a second later.
   */
  private async senderFor(deviceId: number, head: MessageRow): Promise<'same' | 'suspended' | string> {
    const device = await this.reads.senderState(deviceId);
    if (device === undefined || device.deleted_at !== null) return REASON_DELETED;
    if (device.status !== 'ACTIVE') return 'suspended';
    if (device.paired_status !== 'PAIRED' || device.phone !== head.device_phone) return REASON_LOGGED_OUT;
    return 'same';
  }

  private async intervalOf(deviceId: number): Promise<number> {
    const device = await this.device(this.options.store.db, deviceId);
    return device?.send_interval_ms ?? this.options.sendIntervalMs;
  }

  /**
   * The device row, kept briefly: every status change needs its webhook URL,
   * and reading it per message was a large share of the dispatch cost.
   * Changes through this process clear it at once (deviceChanged).
   */
  private async device(db: Db, deviceId: number): Promise<DeviceRow | undefined> {
    const now = Date.now();
    const hit = this.deviceCache.get(deviceId);
    if (hit !== undefined && now - hit.at < DEVICE_CACHE_MS) return hit.row;
    // Outside a transaction, misses of lanes reading at once share one statement.
    const row = db.isTransaction ? await devicesRepository.findById(db, deviceId) : await this.reads.device(deviceId);
    if (row !== undefined) this.deviceCache.set(deviceId, { row, at: now });
    return row;
  }

  // --- one send ---------------------------------------------------------------------

  /** Sends one message; `stored` settles once its outcome (sent or failed) has committed. */
  private async sendOne(
    conn: NetworkConnection,
    row: MessageRow,
    epoch: number,
  ): Promise<{ outcome: 'sent' | 'failed' | 'retry'; stored?: Promise<void> }> {
    const { db } = this.options.store;
    // Only the media's layout is read here; the network reads the bytes chunk by chunk as it sends them.
    const media = MEDIA_TYPES.has(row.type) ? await storedMedia(db, row.id) : undefined;
    if (MEDIA_TYPES.has(row.type) && media === undefined) {
      return {
        outcome: 'failed',
        stored: this.persist(row, () => this.fail(row, epoch, 'the media of this message is missing')),
      };
    }
    try {
      if (row.simulate_typing === 1) {
        const ms = typingDurationMs(row.message);
        await conn.sendTyping(row.receiver, ms).catch(() => undefined);
        await new Promise((resolve) => setTimeout(resolve, ms));
      }
      await conn.sendMessage({
        id: row.id,
        to: row.receiver,
        content: networkContent(row, media),
        ...networkReplyContext(row),
      });
    } catch (error) {
      const now = Date.now();
      // The connection went away mid-send: not the message's fault; the lane resumes when the device reconnects.
      if (error instanceof NetworkUnavailableError) return { outcome: 'retry' };
      if (error instanceof NetworkSendError && error.kind === 'permanent') {
        const reason = error.message;
        return { outcome: 'failed', stored: this.persist(row, () => this.fail(row, epoch, reason)) };
      }
      const attempts = row.attempts + 1;
      const reason = error instanceof Error ? error.message : 'send failed';
      if (attempts >= this.maxAttempts || now - row.created_at >= this.maxQueuedMs) {
        const final = `gave up after ${attempts} attempts: ${reason}`;
        return { outcome: 'failed', stored: this.persist(row, () => this.fail(row, epoch, final)) };
      }
      const ceiling = Math.min(this.retryMaxMs, this.retryBaseMs * 2 ** (attempts - 1));
      const next = now + ceiling / 2 + Math.random() * (ceiling / 2);
      // Not stored: the lane reads the message again and sends it again under the same id (the network dedupes).
      await messagesRepository.scheduleRetry(db, row.id, attempts, Math.round(next));
      return { outcome: 'retry' };
    }
    const hasMedia = MEDIA_TYPES.has(row.type);
    // The connection says how it delivers lists and templates; the message records it (docs/internals.md, WhatsApp and sandbox accounts).
    const renderedAs = INTERACTIVE_TYPES.has(row.type) && conn.capabilities?.interactive === 'text' ? 'text' : null;
    return {
      outcome: 'sent',
      stored: this.persist(row, () => this.markSent(row.device_id, epoch, row.id, hasMedia, renderedAs)),
    };
  }

  /**
   * A status write retried until it commits: the network already acted, and
   * the store is the only record of it. Given up only when the dispatcher
   * closes; a `sent` not stored then is sent again under the same id after the
   * restart, which the network takes once.
   */
  private persist(row: Pick<MessageRow, 'id' | 'device_id'>, write: () => Promise<void>): Promise<void> {
    return this.track(
      untilStored(write, {
        logger: this.options.logger,
        what: 'a message status',
        context: { messageId: row.id, deviceId: row.device_id },
        // A refused write (the device moved to another node) is final: the new holder takes over.
        giveUp: (error) => this.closed || error instanceof LeaseLostError,
      }),
    );
  }

  private track(write: Promise<void>): Promise<void> {
    this.writes.add(write);
    void write
      .then(() => {
        // Commits are serialised, so the flag belongs to the batch that just committed.
        if (!this.eventsRecorded) return;
        this.eventsRecorded = false;
        this.options.onEventsRecorded?.();
      })
      .catch((error: unknown) =>
        this.options.logger.error({ err: error }, 'a message status was not stored before shutdown'),
      )
      .finally(() => this.writes.delete(write));
    return write;
  }

  // --- status writes (group-committed, each with its webhook event) -----------------

  private markSent(
    deviceId: number,
    epoch: number,
    id: string,
    hasMedia: boolean,
    renderedAs: string | null,
  ): Promise<void> {
    const at = this.options.clock.now();
    return this.afterWarming(deviceId, () =>
      this.options.writes.run(deviceId, epoch, async (trx, batch) => {
        if (!(await this.announces(trx, deviceId))) {
          // Nothing to announce: written with the batch's other `sent` changes, in one statement.
          if (!hasMedia) return batch.collect(SENT, { id, deviceId, at, renderedAs });
          await messagesRepository.markSent(trx, id, at, hasMedia, false, renderedAs);
          return;
        }
        const row = await messagesRepository.markSent(trx, id, at, hasMedia, true, renderedAs);
        if (row !== undefined) await this.event(trx, batch, row, 'message.sent', at);
      }),
    );
  }

  private async fail(row: MessageRow, epoch: number, reason: string): Promise<void> {
    const at = this.options.clock.now();
    const ended = await this.afterWarming(row.device_id, () =>
      this.options.writes.run(row.device_id, epoch, async (trx, batch) => {
        const failed = await messagesRepository.markFailed(trx, row.id, at, reason);
        if (failed === undefined) return false;
        // It never reached the network: its unit of quota comes back.
        await messagesRepository.giveBackQuota(trx, row.device_id);
        await this.event(trx, batch, failed, 'message.failed', at);
        return true;
      }),
    );
    // Never the content or the recipient: the id finds the message through the API.
    if (ended) this.options.logger.info({ deviceId: row.device_id, messageId: row.id, reason }, 'message failed');
  }

  private onNetworkEvent(deviceId: number, event: NetworkEvent): void {
    if (event.type === 'logged_out') {
      // The pairing ended and its queue with it: nothing read before may be sent.
      this.deviceCache.delete(deviceId);
      const lane = this.lanes.get(deviceId);
      if (lane !== undefined) {
        lane.buffer = [];
        lane.stale = true;
      }
      return;
    }
    if (event.type === 'connected') {
      // Possibly paired as another number: the guard must see the row as it is now.
      this.deviceCache.delete(deviceId);
      this.notify(deviceId);
      return;
    }
    if (event.type !== 'message_status') return;
    // A receipt reaching a node that no longer holds the device is the new holder's to record.
    const epoch = this.options.holdings.epochOf(deviceId);
    if (epoch === null) return;
    const at = event.at.getTime();
    if (event.status === 'failed') {
      this.track(this.refused(deviceId, epoch, event.id, at, event.reason));
      return;
    }
    const { id, status } = event;
    void this.persist({ id, device_id: deviceId }, () =>
      this.afterWarming(deviceId, () =>
        this.options.writes.run(deviceId, epoch, async (trx, batch) => {
          const change = RECEIPTS[status];
          if (!(await this.announces(trx, deviceId))) {
            // A late ack is rare: written on its own rather than batched.
            if (status === 'sent') await change(trx, deviceId, id, at, false);
            else batch.collect(status === 'delivered' ? DELIVERED : READ, { id, deviceId, at });
            return;
          }
          const row = await change(trx, deviceId, id, at, true);
          if (row !== undefined) await this.event(trx, batch, row, `message.${status}`, at);
        }),
      ),
    );
  }

  /** A refusal after `sent` ends the message failed, with `message.failed` (docs/internals.md, WhatsApp and sandbox accounts). */
  private refused(deviceId: number, epoch: number, id: string, at: number, reason: string): Promise<void> {
    return this.afterWarming(deviceId, () =>
      this.options.writes.run(deviceId, epoch, async (trx, batch) => {
        const row = await messagesRepository.markRefused(trx, deviceId, id, at, reason);
        if (row !== undefined) await this.event(trx, batch, row, 'message.failed', at);
      }),
    );
  }

  /**
   * Runs `write` once the device row its status writes read is in the cache: read before the commit (gathered with
   * other lanes'), not inside it, where each read would hold up the one commit under way. A failed read is left to
   * the write, which then reads the row itself.
   */
  private async afterWarming<T>(deviceId: number, write: () => Promise<T>): Promise<T> {
    await this.device(this.options.store.db, deviceId).catch(() => undefined);
    return write();
  }

  /** Whether the device's status changes become webhook events (it has a URL): only then is the row read back. */
  private async announces(db: Db, deviceId: number): Promise<boolean> {
    return ((await this.device(db, deviceId))?.webhook_url ?? null) !== null;
  }

  private async event(trx: Db, batch: WriteBatch, row: MessageRow, type: EventType, at: number): Promise<void> {
    const device = await this.device(trx, row.device_id);
    // A deleted device's deliveries were stopped with it; a receipt arriving later announces nothing.
    if (device === undefined || device.deleted_at !== null) return;
    const event = eventRow(device, type, presentMessage(row), at);
    if (event === null) return;
    // Stored with the other events of the batch, in one insert before the commit.
    batch.collect(EVENTS, event);
    this.eventsRecorded = true;
  }
}

/** The status change each network receipt makes; `sent` is an ack that came after its wait ran out. */
const RECEIPTS = {
  sent: messagesRepository.markAckedLate,
  delivered: messagesRepository.markDelivered,
  read: messagesRepository.markRead,
} as const;

/** The webhook events of a batch of status writes, inserted together. */
const EVENTS: BatchCollector<EventRow> = { flush: (trx, events) => insertEvents(trx, events) };

type Change = { id: string; deviceId: number; at: number; renderedAs?: string | null };
/** Status changes no webhook announces, written together per kind (each only moves a message forward). */
const SENT: BatchCollector<Change> = { flush: (trx, changes) => messagesRepository.changeMany(trx, 'sent', changes) };
const DELIVERED: BatchCollector<Change> = {
  flush: (trx, changes) => messagesRepository.changeMany(trx, 'delivered', changes),
};
const READ: BatchCollector<Change> = { flush: (trx, changes) => messagesRepository.changeMany(trx, 'read', changes) };
