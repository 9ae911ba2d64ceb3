/**
 * The webhook deliverer (docs/internals.md, Webhooks): turns recorded deliveries into signed HTTP
 * POSTs to their destination (a device's `webhook_url`, or an account webhook), durably and at least once.
 *
 * State machine of one delivery (a `webhook_events` row):
 *
 *   pending ──claim (lease: locked_until = next_attempt_at = now + lease)──▶ in flight
 *   in flight ──2xx──▶ delivered
 *   in flight ──non-2xx, timeout, refused, blocked address, before the
 *               deadline──▶ pending (attempts+1, next_attempt_at = now + backoff)
 *   in flight ──the same failure at or after created_at + 24 h──▶ failed
 *   in flight ──the device has no webhook_url any more, or the account webhook
 *               was deleted or disabled──▶ failed (no request made)
 *   in flight ──the device's webhook format has no body for the type──▶ skipped (no request made)
 *   in flight ──2xx to a message.incoming that may carry replies, the replies
 *               cannot be queued now (store out of service)──▶ pending, as a failure
 *   in flight ──shutdown──▶ pending, due at once (lease cleared, no attempt counted)
 *   in flight ──the process dies──▶ pending, due again when the lease runs out
 *   delivered | failed ──manual retry──▶ pending, due now
 *   in flight ──manual retry──▶ in flight, marked (retry_requested); the attempt's outcome
 *               is logged, then the row goes ──▶ pending, due now
 *
 * Modules: this class is the claim loop (claiming due rows while there is
 * room, the in-flight set, the per-device load, waking for retries) and
 * records outcomes; one attempt is deliver-one.ts, what an answered attempt
 * and a failing receiver mean is outcomes.ts, the devices' targets are
 * targets.ts.
 *
 * Every attempt writes a line to `webhook_attempts` in the same transaction as
 * the row's new state. Rows are stored before any attempt (record.ts, in the
 * transaction of the change that caused them), so nothing lives only here:
 * this class is a set of in-flight requests and one timer.
 *
 * Work is claimed in one statement that leases due rows (see the repository),
 * at most `concurrency` in flight in this process and at most
 * `perDeviceConcurrency` per lane, a device and one destination (counted in
 * the store, so across processes too, give or take claims racing each other):
 * a slow or dead receiver holds only its own lanes' slots and never delays
 * the others, the same device's other destinations included.
 * Wake-ups: the EventSignal (events were committed), a finished attempt (a
 * slot is free), a retry coming due, and a poll (events recorded by another
 * process, leases left by a dead one). Delivery order is not kept: receivers
 * get `created_at` and dedupe by `webhook-id`.
 *
 * The body sent is the stored event rendered in the device's webhook format
 * at the time of the attempt (formats/); a 2xx answer to `message.incoming`
 * is read for replies when the format (or the device's `webhook_reply`) says
 * so, and the replies are queued before the outcome is recorded (reply.ts:
 * idempotent, so an attempt repeated after a crash queues nothing twice).
 *
 * Must never: keep the only copy of an event, send a body other than the
 * stored payload in the destination's format, connect except through the guarded
 * dispatcher, or let a delivery wait on another destination's receiver.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Dispatcher as HttpDispatcher } from 'undici';
import type { Clock } from '../clock.js';
import type { Committer } from '../store/batcher.js';
import type { Store } from '../store/store.js';
import { DEFAULT_ATTEMPT_TIMEOUT_MS } from './attempt.js';
import { deliverOne } from './deliver-one.js';
import { DeliveryOutcomes } from './outcomes.js';
import { eventsRepository, type ClaimParams, type ClaimedEvent, type Completion } from './repository.js';
import { DEFAULT_MAX_AGE_MS, DEFAULT_RETRY_SCHEDULE_MS } from './retry.js';
import type { EventSignal } from './signal.js';
import { NO_TARGETS, readTargets, targetOf, type Target, type Targets } from './targets.js';
import { receiverKey, type ReceiverKey } from './receivers.js';
import { untilStored } from '../store/until-stored.js';
import type { RepliesByResponse } from './reply.js';
import { WakeLoop } from '../wake-loop.js';

export { NO_WEBHOOK_URL_ERROR } from './deliver-one.js';

/** Timings and bounds; every one has a production default, tests shorten them. */
export interface WebhookTimings {
  /** Limit on one attempt, connect to last byte of the answer. */
  readonly timeoutMs?: number;
  /** Waits after the 1st, 2nd, ... failure; the last repeats. */
  readonly retryScheduleMs?: readonly number[];
  /** Give up this long after the event was created. */
  readonly maxAgeMs?: number;
  /** Attempts in flight in this process at once. */
  readonly concurrency?: number;
  /** Attempts in flight per lane (a device and one destination) at once. */
  readonly perDeviceConcurrency?: number;
  /** How long a claim holds a row; must exceed timeoutMs plus the time to record the outcome. */
  readonly leaseMs?: number;
  /** Look for due work at least this often. */
  readonly pollIntervalMs?: number;
  /** On shutdown, how long attempts in flight may finish before they are cut and handed back. */
  readonly closeGraceMs?: number;
}

export interface DelivererOptions extends WebhookTimings {
  readonly store: Store;
  /** Claims and outcomes are written in the shared group commit (one fsync for many). */
  readonly committer: Committer;
  readonly clock: Clock;
  readonly logger: FastifyBaseLogger;
  readonly signal: EventSignal;
  /** The guarded HTTP dispatcher (docs/internals.md, Sending): refuses non-public addresses unless allowed. */
  readonly http: HttpDispatcher;
  /** Reply by response; without it answers are never read. */
  readonly replies?: RepliesByResponse;
}

/** Rows one claim takes at most. */
const CLAIM_BATCH = 100;
/** Paused devices a claim leaves out by name at most; beyond that their deliveries are probed and wait again. */
const MAX_SKIPPED = 64;
const MAX_RETRY_TIMES = 1024;
/** Failed claims remembered for a release; an older one's lease runs out by itself. */
const MAX_LOST_LEASES = 64;

interface Claimed {
  readonly events: ClaimedEvent[];
  readonly targets: Targets;
}

/** A lane: one device's deliveries to one destination (its own webhook_url, or one account webhook). */
function laneOf(event: ClaimedEvent): string {
  return `${event.device_id}:${event.webhook_id ?? ''}`;
}

export class Deliverer {
  /** Every delivery taken here until its outcome is stored (or given up): what close() waits for. */
  private readonly inFlight = new Map<string, Promise<void>>();
  /** Deliveries whose attempt is under way: their outcome is not yet handed to the store. What `concurrency` bounds. */
  private readonly attempting = new Set<string>();
  /** Attempts in flight here per lane (a device and one destination; the store's count includes other processes'). */
  private readonly deviceLoad = new Map<string, number>();
  /**
   * A claim is under way, or the last one stopped for lack of room (here, or a lane's): a finished attempt should
   * look again.
   */
  private roomBound = false;
  /** One per attempt under way; aborted when the close grace runs out. */
  private readonly attempts = new Set<AbortController>();
  /** Records an outcome; true when the delivery is due again at once (a manual retry asked for meanwhile). */
  private readonly write: (completion: Completion) => Promise<boolean>;
  /** Claims due deliveries, with their devices' targets read in the claim's transaction. */
  private readonly lease: (params: ClaimParams) => Promise<Claimed>;
  private readonly timeoutMs: number;
  private readonly concurrency: number;
  private readonly perDevice: number;
  private readonly leaseMs: number;
  private readonly pollIntervalMs: number;
  private readonly closeGraceMs: number;
  private started = false;
  private closed = false;
  /** Claims run one at a time: on a wake-up, a retry coming due, and the poll. */
  private readonly loop: WakeLoop;
  /** When retries scheduled here come due, ascending (bounded: beyond it the poll finds them). */
  private readonly retryTimes: number[] = [];
  /** The `now` of the last claim. */
  private lastClaimAt = 0;
  /** The lease end of the last claim: each claim's is later, so a lost claim's rows are told from the next's. */
  private lastLeaseUntil = 0;
  /** Lease ends of claims that failed: the server may have committed them (the answer lost), handed back next. */
  private readonly lostLeases: number[] = [];
  private unsubscribe: (() => void) | null = null;
  /** What answered attempts mean, and the receivers' health (outcomes.ts). */
  private readonly outcomes: DeliveryOutcomes;

  constructor(private readonly options: DelivererOptions) {
    this.timeoutMs = options.timeoutMs ?? DEFAULT_ATTEMPT_TIMEOUT_MS;
    this.concurrency = options.concurrency ?? 256;
    this.perDevice = options.perDeviceConcurrency ?? 4;
    this.leaseMs = options.leaseMs ?? 60_000;
    this.pollIntervalMs = options.pollIntervalMs ?? 1_000;
    this.closeGraceMs = options.closeGraceMs ?? 3_000;
    this.loop = new WakeLoop({
      run: () => this.claimCycle(),
      // The store is unreachable or busy: the poll tries again.
      onError: (error) => this.options.logger.error({ err: error }, 'claiming webhook deliveries failed'),
      afterErrorMs: () => this.pollIntervalMs,
      clock: options.clock,
    });
    // Paused receivers' backlog moves share the group commit too (outcomes.ts).
    this.outcomes = new DeliveryOutcomes({
      policy: {
        scheduleMs: options.retryScheduleMs ?? DEFAULT_RETRY_SCHEDULE_MS,
        maxAgeMs: options.maxAgeMs ?? DEFAULT_MAX_AGE_MS,
      },
      committer: options.committer,
      clock: options.clock,
      logger: options.logger,
      retryAt: (at) => this.noteRetry(at),
      closed: () => this.closed,
    });
    const complete = options.committer.channel<Completion, boolean>(async (trx, items) => {
      const dueAgain = await eventsRepository.complete(trx, items, options.clock.now());
      return items.map((item) => dueAgain.has(item.id));
    });
    // An outcome not recorded would hold the delivery's lease (and its device's slot) until the lease ran
    // out: through a store outage it is retried until it commits; at shutdown the lease hands it back.
    this.write = (completion) =>
      untilStored(() => complete(completion), {
        logger: options.logger,
        what: 'a webhook attempt',
        context: { eventId: completion.id },
        giveUp: () => this.closed,
      });
    // Claims are writes too (the lease): sharing the group commit saves a commit (an fsync on SQLite) per claim.
    // The targets are read in the same transaction: a claim whose targets cannot be read is rolled back
    // instead of leaving its deliveries leased, unattempted, until the lease runs out.
    this.lease = options.committer.channel<ClaimParams, Claimed>(async (trx, items) => {
      const out: Claimed[] = [];
      for (const params of items) {
        const events = await eventsRepository.claim(trx, params);
        out.push({ events, targets: events.length === 0 ? NO_TARGETS : await readTargets(trx, events) });
      }
      return out;
    });
  }

  async start(): Promise<void> {
    if (this.started || this.closed) return;
    // One process owns a SQLite store: a lease still set now was left by a crash, and nobody is attempting it.
    if (!this.options.store.capabilities.sharedByProcesses) {
      await eventsRepository.releaseAllLeases(this.options.store.db, this.options.clock.now());
    }
    this.started = true;
    this.unsubscribe = this.options.signal.subscribe(() => this.wake());
    this.wake();
  }

  /** Look for due work now (coalesced: a wake during a claim runs one more claim after it). */
  wake(): void {
    if (!this.started || this.closed) return;
    this.loop.wake();
  }

  /** A delivery of the device (to its own webhook_url) was made due now by hand: its receiver gets an attempt even if paused. */
  retryNow(deviceId: number): void {
    this.retryReceiverNow(receiverKey({ device_id: deviceId, webhook_id: null }));
  }

  /** A delivery to the account webhook was made due now by hand: it gets an attempt even if paused. */
  retryWebhookNow(webhookId: string): void {
    this.retryReceiverNow(receiverKey({ device_id: 0, webhook_id: webhookId }));
  }

  private retryReceiverNow(receiver: ReceiverKey): void {
    this.outcomes.resume(receiver);
    this.wake();
  }

  /** Stops claiming; attempts in flight get `closeGraceMs` to finish, then are cut and handed back. */
  async close(): Promise<void> {
    this.closed = true;
    this.unsubscribe?.();
    // A bound on the shutdown in real time, not a rule of the clock's: a test's frozen clock must not hold it open.
    const grace = setTimeout(() => {
      for (const attempt of this.attempts) attempt.abort();
    }, this.closeGraceMs);
    try {
      await this.loop.stop();
      for (;;) {
        const pending = [...this.inFlight.values(), ...this.outcomes.underWay()];
        if (pending.length === 0) break;
        await Promise.allSettled(pending);
      }
    } finally {
      clearTimeout(grace);
    }
  }

  // --- claiming -------------------------------------------------------------------

  /** One claim cycle; the next is due at the poll (or sooner, when a retry comes due). */
  private async claimCycle(): Promise<number> {
    try {
      await this.claimWhileRoom();
    } finally {
      // Only retries the last claim could see as due are done with; one that came due during it is not.
      while (this.retryTimes.length > 0 && this.retryTimes[0]! <= this.lastClaimAt) this.retryTimes.shift();
      const retry = this.retryTimes[0];
      if (retry !== undefined) this.arm(retry);
    }
    return this.options.clock.now() + this.pollIntervalMs;
  }

  private async claimWhileRoom(): Promise<void> {
    const { store, clock } = this.options;
    await this.releaseLostLeases();
    for (;;) {
      // Outcomes being written hold no request open; they are bounded too, in case the store takes them slowly.
      const room = Math.min(this.concurrency - this.attempting.size, 2 * this.concurrency - this.inFlight.size);
      // Until this claim has answered, an attempt that ends asks for one more: the claim may not see the slot it
      // frees (on PostgreSQL the claim can run before that outcome's commit, and count its lease). Left false here,
      // the claim came back empty, the lanes' attempts had all ended meanwhile, and nothing claimed again until the
      // poll: a backlog with no new events drained at one lane's bound a second (test/events/drain-chain.test.ts).
      this.roomBound = true;
      if (room <= 0 || this.closed) return;
      const now = clock.now();
      this.lastClaimAt = now;
      const limit = Math.min(room, CLAIM_BATCH);
      const leaseUntil = Math.max(now + this.leaseMs, this.lastLeaseUntil + 1);
      this.lastLeaseUntil = leaseUntil;
      // Paused receivers' new deliveries wait with their backlog instead of being tried one by one.
      const paused = this.outcomes.paused(now, MAX_SKIPPED);
      const { events: claimed, targets } = await this.lease({
        now,
        leaseUntil,
        limit,
        perDevice: this.perDevice,
        skipDevices: paused.devices,
        skipWebhooks: paused.webhooks,
        skipLocked: store.capabilities.sharedByProcesses,
      }).catch((error: unknown) => {
        if (this.lostLeases.length >= MAX_LOST_LEASES) this.lostLeases.shift();
        this.lostLeases.push(leaseUntil);
        throw error;
      });
      for (const event of claimed) this.begin(event, targetOf(targets, event));
      // A lane at its bound may have had due rows left out: its next finished attempt looks again, and so does the
      // next claim (which skips that lane).
      const deviceBound = [...this.deviceLoad.values()].some((n) => n >= this.perDevice);
      this.roomBound = deviceBound;
      if (claimed.length === 0) return;
      // Fewer than asked and no lane held back: every due row was taken.
      if (claimed.length < limit && !deviceBound) return;
    }
  }

  /**
   * Hands back what failed claims may have leased, before claiming again: those rows would otherwise count
   * as their devices' deliveries in flight, holding the devices' other deliveries, until the lease ran out.
   * A release that fails stays listed (the claim cycle fails and is tried again after the poll).
   */
  private async releaseLostLeases(): Promise<void> {
    while (this.lostLeases.length > 0) {
      const leaseUntil = this.lostLeases[0]!;
      const released = await eventsRepository.releaseLease(this.options.store.db, leaseUntil, this.options.clock.now());
      this.lostLeases.shift();
      if (released > 0) {
        this.options.logger.warn(
          { released },
          'webhook deliveries leased by a claim whose answer was lost handed back',
        );
      }
    }
  }

  private noteRetry(at: number): void {
    const times = this.retryTimes;
    let i = times.length;
    while (i > 0 && times[i - 1]! > at) i--;
    times.splice(i, 0, at);
    if (times.length > MAX_RETRY_TIMES) times.pop();
    this.arm(at);
  }

  /** Runs `at` (or sooner if already armed sooner): the poll, or a retry coming due. */
  private arm(at: number): void {
    if (this.closed || !this.started) return;
    this.loop.wakeAt(at);
  }

  // --- one delivery ---------------------------------------------------------------

  private begin(event: ClaimedEvent, target: Target | undefined): void {
    const lane = laneOf(event);
    this.deviceLoad.set(lane, (this.deviceLoad.get(lane) ?? 0) + 1);
    this.attempting.add(event.id);
    let ended = false;
    // The attempt is over and its outcome queued for the store: its slot is free. A claim asked for from now on is
    // written after that outcome, in the same commit (the outcomes' channel comes before the claims') or a later one,
    // so the store's count of the lane's leases no longer holds it. Worth a claim only if the last one was held back
    // for room.
    const attemptEnded = () => {
      if (ended) return;
      ended = true;
      this.attempting.delete(event.id);
      const load = (this.deviceLoad.get(lane) ?? 1) - 1;
      if (load === 0) this.deviceLoad.delete(lane);
      else this.deviceLoad.set(lane, load);
      if (this.roomBound) this.wake();
    };
    let dueAgain = false;
    const work = this.deliver(event, target, attemptEnded)
      .then((again) => {
        dueAgain = again;
      })
      .catch((error: unknown) => {
        // Recording the outcome failed: the lease runs out and the delivery is claimed again.
        this.options.logger.error({ err: error, eventId: event.id }, 'recording a webhook attempt failed');
      })
      .finally(() => {
        this.inFlight.delete(event.id);
        attemptEnded();
        // This delivery itself is due again: a manual retry came during the attempt.
        if (dueAgain) this.wake();
      });
    this.inFlight.set(event.id, work);
  }

  /** One attempt and its record; true when the delivery is due again at once. `queued`: its outcome is handed over. */
  private async deliver(event: ClaimedEvent, target: Target | undefined, queued: () => void): Promise<boolean> {
    if (this.closed) {
      const released = this.write({ id: event.id, outcome: 'released' });
      queued();
      await released;
      return false;
    }
    const completion = await deliverOne(event, target, {
      clock: this.options.clock,
      logger: this.options.logger,
      http: this.options.http,
      timeoutMs: this.timeoutMs,
      replies: this.options.replies,
      attempts: this.attempts,
      outcome: (answered) => this.outcomes.of(answered),
    });
    const written = this.write(completion);
    queued();
    const dueAgain = await written;
    // Cut by shutdown: handed back, never due again here.
    return completion.outcome === 'released' ? false : dueAgain;
  }
}
