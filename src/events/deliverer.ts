/**
 * The webhook deliverer (docs/internals.md, Webhooks): turns recorded events into signed HTTP
 * POSTs to each device's `webhook_url`, durably and at least once.
 *
 * State machine of one delivery (a `webhook_events` row):
 *
 *   pending ──claim (lease: locked_until = next_attempt_at = now + lease)──▶ in flight
 *   in flight ──2xx──▶ delivered
 *   in flight ──non-2xx, timeout, refused, blocked address, before the
 *               deadline──▶ pending (attempts+1, next_attempt_at = now + backoff)
 *   in flight ──the same failure at or after created_at + 24 h──▶ failed
 *   in flight ──the device has no webhook_url any more──▶ failed (no request made)
 *   in flight ──the device's webhook format has no body for the type──▶ skipped (no request made)
 *   in flight ──2xx to a message.incoming that may carry replies, the replies
 *               cannot be queued now (store out of service)──▶ pending, as a failure
 *   in flight ──shutdown──▶ pending, due at once (lease cleared, no attempt counted)
 *   in flight ──the process dies──▶ pending, due again when the lease runs out
 *   delivered | failed ──manual retry──▶ pending, due now
 *   in flight ──manual retry──▶ in flight, marked (retry_requested); the attempt's outcome
 *               is logged, then the row goes ──▶ pending, due now
 *
 * Every attempt writes a line to `webhook_attempts` in the same transaction as
 * the row's new state. Rows are stored before any attempt (record.ts, in the
 * transaction of the change that caused them), so nothing lives only here:
 * this class is a set of in-flight requests and one timer.
 *
 * Work is claimed in one statement that leases due rows (see the repository),
 * at most `concurrency` in flight in this process and at most
 * `perDeviceConcurrency` per device (counted in the store, so across
 * processes too, give or take claims racing each other): a slow or dead
 * receiver holds only its own device's slots and never delays the others.
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
 * stored payload in the device's format, connect except through the guarded
 * dispatcher, or let a delivery of one device wait on another device's receiver.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Dispatcher as HttpDispatcher } from 'undici';
import type { Clock } from '../clock.js';
import type { Committer } from '../store/batcher.js';
import type { Store } from '../store/store.js';
import type { Db } from '../store/schema.js';
import { attemptDelivery, type AttemptResult } from './attempt.js';
import { eventsRepository, type ClaimParams, type ClaimedEvent, type Completion } from './repository.js';
import { DEFAULT_MAX_AGE_MS, DEFAULT_RETRY_SCHEDULE_MS, afterFailure, type RetryPolicy } from './retry.js';
import type { EventSignal } from './signal.js';
import { signDelivery, signingSecrets } from './signing.js';
import { ReceiverHealth, type FailureVerdict } from './receivers.js';
import { iso } from '../clock.js';
import { untilStored } from '../store/until-stored.js';
import { answersWithReplies, renderBody, webhookFormat, type WebhookFormat } from './formats/index.js';
import { REPLY_ANSWER_MAX_BYTES } from './reply-answer.js';
import type { RepliesByResponse, ReplyNote } from './reply.js';

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
  /** Attempts in flight per device at once. */
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

interface Target {
  readonly accountId: number;
  readonly url: string | null;
  readonly format: WebhookFormat;
  readonly reply: boolean;
  readonly secret: string;
  readonly previous: string | null;
  readonly previousUntil: number | null;
}

/** Rows one claim takes at most, and due rows it looks at to find them. */
const CLAIM_BATCH = 100;
const CLAIM_SCAN = 500;
/** Paused devices a claim leaves out by name at most; beyond that their deliveries are probed and wait again. */
const MAX_SKIPPED = 64;
const MAX_RETRY_TIMES = 1024;
/** Rows one step of moving a paused receiver's backlog touches (a short write, sharing the group commit). */
const DEFER_CHUNK = 5_000;

export const NO_WEBHOOK_URL_ERROR = 'the device has no webhook_url; delivery stopped';

/** Where and how each device's deliveries go (read with the claim, in its transaction). */
async function readTargets(db: Db, claimed: readonly ClaimedEvent[]): Promise<Map<number, Target>> {
  const ids = [...new Set(claimed.map((event) => event.device_id))];
  const rows = await eventsRepository.targets(db, ids);
  return new Map(
    rows.map((row) => [
      Number(row.id),
      {
        accountId: Number(row.account_id),
        url: row.webhook_url,
        format: webhookFormat(row.webhook_format),
        reply: row.webhook_reply === 1,
        secret: row.webhook_secret,
        previous: row.webhook_secret_previous,
        previousUntil: row.webhook_secret_previous_until === null ? null : Number(row.webhook_secret_previous_until),
      },
    ]),
  );
}

interface Claimed {
  readonly events: ClaimedEvent[];
  readonly targets: Map<number, Target>;
}

export class Deliverer {
  private readonly inFlight = new Map<string, Promise<void>>();
  /** Attempts in flight here per device (the store's count includes other processes'). */
  private readonly deviceLoad = new Map<number, number>();
  /** The last claim stopped for lack of room (here, or a device's): a finished attempt should look again. */
  private roomBound = false;
  /** One per attempt under way; aborted when the close grace runs out. */
  private readonly attempts = new Set<AbortController>();
  /** Records an outcome; true when the delivery is due again at once (a manual retry asked for meanwhile). */
  private readonly write: (completion: Completion) => Promise<boolean>;
  /** Claims due deliveries, with their devices' targets read in the claim's transaction. */
  private readonly lease: (params: ClaimParams) => Promise<Claimed>;
  private readonly policy: RetryPolicy;
  private readonly timeoutMs: number;
  private readonly concurrency: number;
  private readonly perDevice: number;
  private readonly leaseMs: number;
  private readonly pollIntervalMs: number;
  private readonly closeGraceMs: number;
  private started = false;
  private closed = false;
  private cycle: Promise<void> | null = null;
  private again = false;
  private timer: NodeJS.Timeout | null = null;
  private timerAt = Infinity;
  /** When retries scheduled here come due, ascending (bounded: beyond it the poll finds them). */
  private readonly retryTimes: number[] = [];
  /** The `now` of the last claim. */
  private lastClaimAt = 0;
  private unsubscribe: (() => void) | null = null;
  /** Receivers that keep failing are paused as a whole (receivers.ts). */
  private readonly health: ReceiverHealth;
  /** Moves of a paused receiver's backlog under way, by device. */
  private readonly deferrals = new Map<number, Promise<void>>();
  private readonly deferStep: (params: { deviceId: number; until: number; now: number }) => Promise<number>;

  constructor(private readonly options: DelivererOptions) {
    this.policy = {
      scheduleMs: options.retryScheduleMs ?? DEFAULT_RETRY_SCHEDULE_MS,
      maxAgeMs: options.maxAgeMs ?? DEFAULT_MAX_AGE_MS,
    };
    this.timeoutMs = options.timeoutMs ?? 5_000;
    this.concurrency = options.concurrency ?? 256;
    this.perDevice = options.perDeviceConcurrency ?? 4;
    this.leaseMs = options.leaseMs ?? 60_000;
    this.pollIntervalMs = options.pollIntervalMs ?? 1_000;
    this.closeGraceMs = options.closeGraceMs ?? 3_000;
    this.health = new ReceiverHealth(this.policy.scheduleMs);
    this.deferStep = options.committer.channel<{ deviceId: number; until: number; now: number }, number>(
      async (trx, items) => {
        const out: number[] = [];
        for (const p of items) {
          await eventsRepository.failExpired(trx, p.deviceId, p.now - this.policy.maxAgeMs, p.now);
          out.push(await eventsRepository.defer(trx, p.deviceId, p.until, p.now, DEFER_CHUNK));
        }
        return out;
      },
    );
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
        out.push({ events, targets: events.length === 0 ? new Map() : await readTargets(trx, events) });
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
    if (this.cycle !== null) {
      this.again = true;
      return;
    }
    this.cycle = this.claimCycle().finally(() => {
      this.cycle = null;
      if (this.again && !this.closed) {
        this.again = false;
        this.wake();
      }
    });
  }

  /** A delivery of the device was made due now by hand: its receiver gets an attempt even if paused. */
  retryNow(deviceId: number): void {
    this.health.resume(deviceId);
    this.wake();
  }

  /** Stops claiming; attempts in flight get `closeGraceMs` to finish, then are cut and handed back. */
  async close(): Promise<void> {
    this.closed = true;
    this.unsubscribe?.();
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    const grace = setTimeout(() => {
      for (const attempt of this.attempts) attempt.abort();
    }, this.closeGraceMs);
    try {
      while (this.cycle !== null || this.inFlight.size > 0 || this.deferrals.size > 0) {
        await this.cycle;
        await Promise.allSettled([...this.inFlight.values(), ...this.deferrals.values()]);
      }
    } finally {
      clearTimeout(grace);
    }
  }

  // --- claiming -------------------------------------------------------------------

  private async claimCycle(): Promise<void> {
    try {
      do {
        this.again = false;
        await this.claimWhileRoom();
      } while (this.again && !this.closed);
    } catch (error) {
      // The store is unreachable or busy: the poll tries again.
      this.options.logger.error({ err: error }, 'claiming webhook deliveries failed');
    } finally {
      // Only retries the last claim could see as due are done with; one that came due during it is not.
      while (this.retryTimes.length > 0 && this.retryTimes[0]! <= this.lastClaimAt) this.retryTimes.shift();
      this.arm(Math.min(this.options.clock.now() + this.pollIntervalMs, this.retryTimes[0] ?? Infinity));
    }
  }

  private async claimWhileRoom(): Promise<void> {
    const { store, clock } = this.options;
    for (;;) {
      const room = this.concurrency - this.inFlight.size;
      this.roomBound = room <= 0;
      if (room <= 0 || this.closed) return;
      const now = clock.now();
      this.lastClaimAt = now;
      const limit = Math.min(room, CLAIM_BATCH);
      const { events: claimed, targets } = await this.lease({
        now,
        leaseUntil: now + this.leaseMs,
        limit,
        perDevice: this.perDevice,
        // Paused receivers' new deliveries wait with their backlog instead of being tried one by one.
        skipDevices: this.health.paused(now, MAX_SKIPPED),
        scan: CLAIM_SCAN,
        skipLocked: store.capabilities.sharedByProcesses,
      });
      for (const event of claimed) this.begin(event, targets.get(event.device_id));
      // A device at its bound had due rows left out, and may have more beyond the scan: its next
      // finished attempt looks again, and so does the next claim (which skips that device).
      const deviceBound = [...this.deviceLoad.values()].some((n) => n >= this.perDevice);
      this.roomBound = deviceBound;
      if (claimed.length === 0) return;
      // Fewer than asked and no device held back: the scan held every due row, all taken.
      if (claimed.length < limit && !deviceBound) return;
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
    if (this.timer !== null && this.timerAt <= at) return;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timerAt = at;
    this.timer = setTimeout(
      () => {
        this.timer = null;
        this.timerAt = Infinity;
        this.wake();
      },
      Math.max(0, at - this.options.clock.now()),
    );
  }

  // --- one delivery ---------------------------------------------------------------

  private begin(event: ClaimedEvent, target: Target | undefined): void {
    const device = event.device_id;
    this.deviceLoad.set(device, (this.deviceLoad.get(device) ?? 0) + 1);
    let dueAgain = false;
    const work = this.deliver(event, target)
      .then((again) => {
        dueAgain = again;
      })
      .catch((error: unknown) => {
        // Recording the outcome failed: the lease runs out and the delivery is claimed again.
        this.options.logger.error({ err: error, eventId: event.id }, 'recording a webhook attempt failed');
      })
      .finally(() => {
        this.inFlight.delete(event.id);
        const load = (this.deviceLoad.get(device) ?? 1) - 1;
        if (load === 0) this.deviceLoad.delete(device);
        else this.deviceLoad.set(device, load);
        // The slot (and the lease, now written) is free: worth a look only if a claim was held back
        // for room, or if this delivery itself is due again (a manual retry came during the attempt).
        if (this.roomBound || dueAgain) this.wake();
      });
    this.inFlight.set(event.id, work);
  }

  /** One attempt and its record; true when the delivery is due again at once. */
  private async deliver(event: ClaimedEvent, target: Target | undefined): Promise<boolean> {
    const { clock } = this.options;
    if (this.closed) {
      await this.write({ id: event.id, outcome: 'released' });
      return false;
    }
    const attemptedAt = clock.now();
    if (target === undefined || target.url === null) {
      const attempt = {
        attempted_at: attemptedAt,
        http_status: null,
        latency_ms: 0,
        error: NO_WEBHOOK_URL_ERROR,
        url: null,
        format: null,
        reply: null,
      };
      return this.write({ id: event.id, attempt, outcome: 'failed' });
    }
    const { format } = target;
    let body: string | null;
    try {
      body = renderBody(format, event.type, event.payload);
    } catch (error) {
      // Our own stored body that a renderer cannot read: a bug to fix, not a receiver to retry.
      this.options.logger.error({ err: error, eventId: event.id, format }, 'a webhook event could not be rendered');
      const attempt = {
        attempted_at: attemptedAt,
        http_status: null,
        latency_ms: 0,
        error: `the event could not be written in the ${format} format`,
        url: null,
        format,
        reply: null,
      };
      return this.write({ id: event.id, attempt, outcome: 'failed' });
    }
    if (body === null) {
      const error = `skipped: the ${format} webhook format has no body for ${event.type}`;
      const attempt = {
        attempted_at: attemptedAt,
        http_status: null,
        latency_ms: 0,
        error,
        url: null,
        format,
        reply: null,
      };
      return this.write({ id: event.id, attempt, outcome: 'skipped' });
    }
    const replies = this.options.replies;
    const readsReplies = replies !== undefined && answersWithReplies(format, target.reply, event.type);
    const abort = new AbortController();
    this.attempts.add(abort);
    let result = await attemptDelivery({
      url: target.url,
      headers: signDelivery(signingSecrets(target, attemptedAt), event.id, body, attemptedAt),
      body,
      dispatcher: this.options.http,
      timeoutMs: this.timeoutMs,
      abort,
      ...(readsReplies ? { answerLimit: REPLY_ANSWER_MAX_BYTES } : {}),
    }).finally(() => this.attempts.delete(abort));
    if (result.aborted) {
      await this.write({ id: event.id, outcome: 'released' });
      return false;
    }
    let note: ReplyNote | null = null;
    if (result.ok && readsReplies && result.answer !== undefined) {
      const replied = await replies.handle(target.accountId, event.id, event.payload, result.answer);
      note = replied.note;
      // The receiver has the event, but its replies are not all queued: attempted again (they are idempotent).
      if (replied.retry !== null) result = { ...result, ok: false, error: replied.retry };
    }
    return this.write(this.outcome(event, target.url, format, note, attemptedAt, result));
  }

  private outcome(
    event: ClaimedEvent,
    url: string,
    format: WebhookFormat,
    note: ReplyNote | null,
    attemptedAt: number,
    result: AttemptResult,
  ): Completion {
    const { logger, clock } = this.options;
    const attempt = {
      attempted_at: attemptedAt,
      http_status: result.httpStatus,
      latency_ms: result.latencyMs,
      error: result.error,
      url,
      format,
      reply: note === null ? null : JSON.stringify(note),
    };
    const deviceId = event.device_id;
    if (result.ok) {
      if (this.health.succeeded(deviceId)) logger.info({ deviceId }, 'webhook receiver answering again');
      return { id: event.id, attempt, outcome: 'delivered' };
    }
    const now = clock.now();
    const attempts = event.attempts + 1;
    const verdict = this.health.failed(deviceId, now);
    // Never the URL (it may carry a token) nor the receiver's answer (it may echo message content).
    const why = result.httpStatus === null ? { error: result.error } : { status: result.httpStatus };
    const decision = afterFailure(this.policy, attempts, event.created_at, now);
    if ('giveUp' in decision) {
      logger.warn({ eventId: event.id, deviceId, attempts, ...why }, 'webhook delivery failed for good');
      this.receiverVerdict(deviceId, verdict, why);
      return { id: event.id, attempt, outcome: 'failed' };
    }
    // A paused receiver is not tried before its pause ends, but never past the give-up deadline.
    const retryAt = Math.min(Math.max(decision.retryAt, verdict.pausedUntil), event.created_at + this.policy.maxAgeMs);
    logger.info({ eventId: event.id, deviceId, attempts, ...why, retry_at: iso(retryAt) }, 'webhook attempt failed');
    this.receiverVerdict(deviceId, verdict, why);
    // Wake for it ourselves rather than waiting for the next poll.
    this.noteRetry(retryAt);
    return { id: event.id, attempt, outcome: 'retry', retryAt };
  }

  /** What a failure means for the receiver as a whole: a pause (its backlog moved past it), a warning. */
  private receiverVerdict(deviceId: number, verdict: FailureVerdict, why: object): void {
    const { logger } = this.options;
    if (verdict.warnFailingSince !== null) {
      logger.warn(
        { deviceId, failing_since: iso(verdict.warnFailingSince), failures: verdict.failures, ...why },
        'webhook receiver failing for an hour or more',
      );
    }
    if (!verdict.newlyPaused) return;
    logger.info(
      { deviceId, failures: verdict.failures, paused_until: iso(verdict.pausedUntil) },
      'webhook receiver keeps failing; its deliveries wait until the pause ends',
    );
    this.deferBacklog(deviceId, verdict.pausedUntil);
    this.noteRetry(verdict.pausedUntil);
  }

  /**
   * Moves the device's waiting deliveries to the end of its receiver's pause, in short steps, so they
   * leave the due range the claims scan (and fails those past the give-up age). One move per device at a time.
   */
  private deferBacklog(deviceId: number, until: number): void {
    if (this.deferrals.has(deviceId) || this.closed) return;
    const run = (async () => {
      for (;;) {
        if (this.closed || this.health.pausedUntil(deviceId) < until) return;
        const moved = await this.deferStep({ deviceId, until, now: this.options.clock.now() });
        if (moved < DEFER_CHUNK) return;
      }
    })()
      .catch((error: unknown) => {
        // The rows stay due: they are attempted (and fail, and are retried) one by one, as without a pause.
        this.options.logger.error({ err: error, deviceId }, 'moving a paused receiver’s deliveries failed');
      })
      .finally(() => this.deferrals.delete(deviceId));
    this.deferrals.set(deviceId, run);
  }
}
