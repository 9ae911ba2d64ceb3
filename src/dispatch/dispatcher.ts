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
 * until it commits, through a store outage. A device with no send interval
 * sends its due heads in runs (lane.ts runOf): claimed in one statement, sent
 * one after another, their outcomes committed together; the lane takes the
 * next run only once every outcome of the one before is stored, and a retry
 * ends a run (what came after it loses its claim and waits behind it).
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
 * Each lane runs on a wake-up loop (src/wake-loop.ts) and reads one clock, the
 * injected one: its waits (retry times, the send interval, a suspended device's
 * recheck, typing) are set through it. Its decisions are lane.ts's; its status
 * writes are status-writes.ts's.
 *
 * Must never: send a message of one device out of order, send for a device not
 * held here, or hold the only copy of anything (a lane is a cursor and a timer;
 * the store has the queue).
 */
import type { FastifyBaseLogger } from 'fastify';
import { sleep, type Clock } from '../clock.js';
import { doubling, jitter } from '../backoff.js';
import type { ConnectionManager } from '../devices/connections.js';
import {
  NetworkSendError,
  NetworkUnavailableError,
  type NetworkConnection,
  type NetworkEvent,
} from '../network/network.js';
import type { FencedWrites } from '../cluster/fenced-writes.js';
import { QueueReads } from './queue-reads.js';
import type { Store } from '../store/store.js';
import { LeaseLostError, type DeviceHoldings } from '../cluster/holdings.js';
import type { MessageRow } from '../messages/repository.js';
import { messageStatusRepository } from '../messages/status-repository.js';
import { actionsRepository } from '../messages/actions-repository.js';
import { REASON_DELETED, REASON_LOGGED_OUT } from '../messages/end-queue.js';
import type { LinkPreviews } from '../messages/link-preview.js';
import { networkContent, networkReplyContext, previewedText } from '../messages/network-content.js';
import { storedMedia } from '../messages/stored-media.js';
import { WakeLoop, type NextRun } from '../wake-loop.js';
import { DeviceCache } from './device-cache.js';
import { StatusWrites } from './status-writes.js';
import {
  afterGuard,
  dueAt,
  forgetRead,
  newLane,
  passHead,
  resetLane,
  runOf,
  typingDurationMs,
  type GuardRules,
  type HeadStep,
  type Lane,
  type Sender,
} from './lane.js';

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
  /** Makes a chat message's link preview as it is sent; without it, chat messages go without one. */
  readonly linkPreviews?: LinkPreviews;
}

const MEDIA_TYPES = new Set(['image', 'video', 'audio', 'file', 'sticker']);
const INTERACTIVE_TYPES = new Set(['list', 'template']);
const BATCH = 100;
/** How often a suspended device's lane looks whether it was made active again (e.g. by the CLI, another process). */
const SUSPENDED_RECHECK_MS = 1000;
/** A lane whose run failed (not a lost lease) runs again after this long. */
const LANE_ERROR_RETRY_MS = 1000;
/** `failed_reason` of a message that waited on a suspended device past the queue's time limit (24 h). */
export const REASON_SUSPENDED_TOO_LONG = 'device suspended for longer than a message may stay queued';

/** The head of a lane's queue with what sending it needs. */
interface Work {
  readonly head: MessageRow;
  readonly epoch: number;
  readonly conn: NetworkConnection;
}

export class Dispatcher {
  private readonly lanes = new Map<number, Lane>();
  private closed = false;
  private unsubscribe: (() => void) | null = null;
  private readonly maxAttempts: number;
  private readonly retryBaseMs: number;
  private readonly retryMaxMs: number;
  private readonly maxQueuedMs: number;
  private readonly guard: GuardRules;
  /** The lanes' queue and guard reads, gathered across lanes asking at once. */
  private readonly reads: QueueReads;
  private readonly devices: DeviceCache;
  private readonly statuses: StatusWrites;

  constructor(private readonly options: DispatcherOptions) {
    this.reads = new QueueReads(options.store.db, BATCH);
    this.devices = new DeviceCache(this.reads, options.clock);
    this.statuses = new StatusWrites({
      store: options.store,
      writes: options.writes,
      clock: options.clock,
      logger: options.logger,
      devices: this.devices,
      closed: () => this.closed,
    });
    this.maxAttempts = options.maxAttempts ?? 12;
    this.retryBaseMs = options.retryBaseMs ?? 2_000;
    this.retryMaxMs = options.retryMaxMs ?? 10 * 60_000;
    this.maxQueuedMs = options.maxQueuedMs ?? 24 * 60 * 60_000;
    this.guard = {
      maxQueuedMs: this.maxQueuedMs,
      suspendedRecheckMs: SUSPENDED_RECHECK_MS,
      suspendedTooLong: REASON_SUSPENDED_TOO_LONG,
    };
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
    resetLane(lane);
    await lane.loop.settled();
    this.devices.forget(deviceId);
  }

  /** A message was committed for this device (or its connection opened): move its queue. */
  notify(deviceId: number): void {
    if (this.closed) return;
    let lane = this.lanes.get(deviceId);
    if (lane === undefined) {
      lane = this.newLane(deviceId);
      this.lanes.set(deviceId, lane);
    }
    lane.stale = true;
    lane.loop.wake();
  }

  /** The device's settings changed: its send interval is read again before the next send. */
  deviceChanged(deviceId: number): void {
    this.devices.forget(deviceId);
    const lane = this.lanes.get(deviceId);
    if (lane === undefined) return;
    lane.intervalMs = null;
    // A suspended device made active again (or any change of its sender) is looked at now, not at the next check.
    lane.stale = true;
    lane.loop.wake();
  }

  /** Stops taking new work, lets each lane finish the send it is in, and waits for every status write. */
  async close(): Promise<void> {
    this.closed = true;
    this.unsubscribe?.();
    await Promise.all([...this.lanes.values()].map((lane) => lane.loop.stop()));
    await this.statuses.settled();
  }

  // --- lanes ----------------------------------------------------------------------

  private newLane(deviceId: number): Lane {
    const loop = new WakeLoop({
      run: async () => {
        try {
          return await this.drive(deviceId, lane);
        } catch (error) {
          if (!(error instanceof LeaseLostError)) throw error;
          // The device moved to another node (the cluster drops it here too): nothing more to do for it.
          resetLane(lane);
          return null;
        }
      },
      onError: (error) => this.options.logger.error({ err: error, deviceId }, 'dispatch lane failed; retrying shortly'),
      afterErrorMs: () => LANE_ERROR_RETRY_MS,
      clock: this.options.clock,
    });
    const lane = newLane(loop);
    return lane;
  }

  /**
   * Sends the device's queue, head first, until nothing can go now. Answers when the lane is due again by itself
   * (a retry's time, the send interval, a suspended device's recheck), or null: when woken.
   */
  private async drive(deviceId: number, lane: Lane): Promise<NextRun> {
    for (;;) {
      const work = await this.workOf(deviceId, lane);
      if (work === null) return null;
      const step = await this.stepFor(deviceId, lane, work.head);
      if (step.kind === 'wait') return step.until;
      if (step.kind === 'send') await this.sendRun(lane, work, runOf(lane, this.options.clock.now(), BATCH));
      else if (await this.end(work, step.reason)) passHead(lane, work.head);
    }
  }

  /** The head of the queue, or null: nothing to do until woken (closing, not held, not connected, queue empty). */
  private async workOf(deviceId: number, lane: Lane): Promise<Work | null> {
    if (this.closed) return null;
    // Asked before every send: a device taken over, or a lease this node could not renew, stops the lane.
    const epoch = this.options.holdings.epochOf(deviceId);
    if (epoch === null) {
      resetLane(lane);
      return null;
    }
    const conn = this.options.connections.connection(deviceId);
    if (conn === null) return null; // woken again when the device connects
    if (lane.buffer.length === 0 && lane.stale) {
      lane.stale = false;
      lane.buffer = await this.reads.pendingAfter(deviceId, lane.cursor);
      if (lane.buffer.length === BATCH) lane.stale = true;
    }
    const head = lane.buffer[0];
    return head === undefined ? null : { head, epoch, conn };
  }

  /** What to do with the head now: wait for its time, send it, or end it (the guard refused it for good). */
  private async stepFor(deviceId: number, lane: Lane, head: MessageRow): Promise<HeadStep> {
    lane.intervalMs ??= await this.intervalOf(deviceId);
    const { clock } = this.options;
    const until = dueAt(lane, head, clock.now());
    if (until !== null) return { kind: 'wait', until };
    return afterGuard(await this.senderFor(deviceId, head), head, clock.now(), this.guard);
  }

  /**
   * Sends a run of the queue's heads (runOf: the head alone unless the device sends with no interval), claimed in
   * one statement and sent one after another in order; the lane moves past them once all their outcomes are stored
   * (committed together). A retry ends the run: what came after it was never tried, loses its claim, and is read
   * again with the retried head.
   */
  private async sendRun(lane: Lane, { conn, epoch }: Work, run: readonly MessageRow[]): Promise<void> {
    const { db } = this.options.store;
    const deviceId = run[0]!.device_id;
    // Committed before the sends, in the status writes' group commit fenced by the epoch (a lost lease: nothing sent).
    const now = this.options.clock.now();
    const claimed = await this.options.writes.run(deviceId, epoch, (t) =>
      actionsRepository.claimMany(t, deviceId, run, now),
    );
    const outcomes: Promise<void>[] = [];
    // `over`: messages of the run that are over (sent, failed, or cancelled before the claim: nothing to store);
    // `tried`: the one after them went to the network (a retry, or an error), and its claim stays its own.
    let over = 0;
    let tried = false;
    try {
      for (const row of run) {
        // Closing, or the device moved to another node: the rest of the run waits (for the next holder).
        if (this.closed || this.options.holdings.epochOf(row.device_id) !== epoch) break;
        if (claimed.has(row.id)) {
          tried = true;
          const { outcome, stored } = await this.sendOne(conn, row, epoch);
          if (outcome === 'retry') break;
          tried = false;
          if (outcome === 'sent') lane.lastSentAt = this.options.clock.now();
          if (stored !== undefined) outcomes.push(stored);
        }
        over++;
      }
    } catch (error) {
      forgetRead(lane);
      throw error;
    } finally {
      // Claimed but never tried (the run stopped before them): a cancel may end them again. Not once the device
      // left this node: its claims may be the next holder's by now.
      const untried = run.slice(tried ? over + 1 : over).flatMap((row) => (claimed.has(row.id) ? [row.id] : []));
      if (untried.length > 0 && this.options.holdings.epochOf(deviceId) === epoch) {
        const warn = (error: unknown) => this.options.logger.warn({ err: error }, 'could not release claimed messages');
        await actionsRepository.unclaim(db, untried).catch(warn);
      }
      // The lane moves past a message only once its outcome is in the store (retried through an outage).
      await Promise.all(outcomes);
    }
    for (const row of run.slice(0, over)) passHead(lane, row);
    if (over < run.length) forgetRead(lane);
  }

  /** Ends the head failed (it can never be sent); true once stored. */
  private async end({ head, epoch }: Work, reason: string): Promise<true> {
    await this.statuses.persist(head, () => this.statuses.fail(head, epoch, reason));
    return true;
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
  private async senderFor(deviceId: number, head: MessageRow): Promise<Sender> {
    const device = await this.reads.senderState(deviceId);
    if (device === undefined || device.deleted_at !== null) return REASON_DELETED;
    if (device.status !== 'ACTIVE') return 'suspended';
    if (device.paired_status !== 'PAIRED' || device.phone !== head.device_phone) return REASON_LOGGED_OUT;
    return 'same';
  }

  private async intervalOf(deviceId: number): Promise<number> {
    const device = await this.devices.get(this.options.store.db, deviceId);
    return device?.send_interval_ms ?? this.options.sendIntervalMs;
  }

  /**
   * One send: sends one message, claimed by its run in one statement that a cancel (actions.ts) cannot pass: a message is
   * either sent or cancelled. `stored` settles once its outcome (sent or failed) has committed.
   */
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
        stored: this.statuses.persist(row, () =>
          this.statuses.fail(row, epoch, 'the media of this message is missing'),
        ),
      };
    }
    try {
      if (row.simulate_typing === 1) {
        const ms = typingDurationMs(row.message);
        await conn.sendTyping(row.receiver, ms).catch(() => undefined);
        await sleep(this.options.clock, ms);
      }
      const content = networkContent(row, media);
      // Made at send time; one that cannot be made is left out, never failing the message (link-preview.ts).
      const text = previewedText(row);
      const preview = text === null ? undefined : await this.options.linkPreviews?.preview(text);
      await conn.sendMessage({
        id: row.id,
        to: row.receiver,
        content: preview === undefined || content.type !== 'chat' ? content : { ...content, preview },
        ...networkReplyContext(row),
      });
    } catch (error) {
      const now = this.options.clock.now();
      // The connection went away mid-send: not the message's fault; the lane resumes when the device reconnects.
      if (error instanceof NetworkUnavailableError) return { outcome: 'retry' };
      if (error instanceof NetworkSendError && error.kind === 'permanent') {
        const reason = error.message;
        return { outcome: 'failed', stored: this.statuses.persist(row, () => this.statuses.fail(row, epoch, reason)) };
      }
      const attempts = row.attempts + 1;
      const reason = error instanceof Error ? error.message : 'send failed';
      if (attempts >= this.maxAttempts || now - row.created_at >= this.maxQueuedMs) {
        const final = `gave up after ${attempts} attempts: ${reason}`;
        return { outcome: 'failed', stored: this.statuses.persist(row, () => this.statuses.fail(row, epoch, final)) };
      }
      const next = now + jitter(doubling(this.retryBaseMs, this.retryMaxMs, attempts));
      // Not stored: the lane reads the message again and sends it again under the same id (the network dedupes).
      await messageStatusRepository.scheduleRetry(db, row.id, attempts, Math.round(next));
      return { outcome: 'retry' };
    }
    if (row.direction === 'action') {
      return {
        outcome: 'sent',
        stored: this.statuses.persist(row, () => this.statuses.markActionSent(row.device_id, epoch, row)),
      };
    }
    const hasMedia = MEDIA_TYPES.has(row.type);
    // The connection says how it delivers lists and templates; the message records it (docs/internals.md, WhatsApp and sandbox accounts).
    const renderedAs = INTERACTIVE_TYPES.has(row.type) && conn.capabilities?.interactive === 'text' ? 'text' : null;
    return {
      outcome: 'sent',
      stored: this.statuses.persist(row, () => this.statuses.markSent(row.device_id, epoch, row, hasMedia, renderedAs)),
    };
  }

  private onNetworkEvent(deviceId: number, event: NetworkEvent): void {
    if (event.type === 'logged_out') {
      // The pairing ended and its queue with it: nothing read before may be sent.
      this.devices.forget(deviceId);
      const lane = this.lanes.get(deviceId);
      if (lane !== undefined) forgetRead(lane);
      return;
    }
    if (event.type === 'connected') {
      // Possibly paired as another number: the guard must see the row as it is now.
      this.devices.forget(deviceId);
      this.notify(deviceId);
      return;
    }
    if (event.type !== 'message_status') return;
    // A receipt reaching a node that no longer holds the device is the new holder's to record.
    const epoch = this.options.holdings.epochOf(deviceId);
    if (epoch !== null) this.statuses.receipt(deviceId, epoch, event);
  }
}
