/**
 * What an answered webhook attempt means (docs/internals.md, Webhooks): delivered, due again after a
 * backoff, or failed for good; and what a run of failures means for the device's receiver as a whole
 * (receivers.ts; a device's own webhook_url and each account webhook are receivers of their own): a pause,
 * during which its waiting backlog is moved past the pause in short steps.
 *
 * Owns: the completion of an answered attempt, the receivers' health, the operator's log lines about
 * failing receivers, and moving a paused receiver's backlog.
 * Must never: log a receiver's URL (it may carry a token) or its answer (it may echo message content),
 * retry past the give-up deadline, or run two backlog moves of one device at once.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../clock.js';
import { iso } from '../clock.js';
import type { Committer } from '../store/batcher.js';
import type { Answered } from './deliver-one.js';
import { ReceiverHealth, receiverKey, receiverOf, type FailureVerdict, type ReceiverKey } from './receivers.js';
import { eventsRepository, type Completion } from './repository.js';
import { afterFailure, type RetryPolicy } from './retry.js';

/** Rows one step of moving a paused receiver's backlog touches (a short write, sharing the group commit). */
const DEFER_CHUNK = 5_000;

export interface OutcomesOptions {
  readonly policy: RetryPolicy;
  readonly committer: Committer;
  readonly clock: Clock;
  readonly logger: FastifyBaseLogger;
  /** A delivery (or a paused receiver's backlog) is due again at `at`: the deliverer wakes for it. */
  readonly retryAt: (at: number) => void;
  /** The deliverer is closing: no backlog move starts or goes on. */
  readonly closed: () => boolean;
}

interface DeferStep {
  readonly receiver: ReceiverKey;
  readonly until: number;
  readonly now: number;
}

export class DeliveryOutcomes {
  /** Receivers that keep failing are paused as a whole (receivers.ts). */
  private readonly health: ReceiverHealth;
  /** Moves of a paused receiver's backlog under way, by receiver. */
  private readonly deferrals = new Map<ReceiverKey, Promise<void>>();
  private readonly deferStep: (params: DeferStep) => Promise<number>;

  constructor(private readonly options: OutcomesOptions) {
    const { policy } = options;
    this.health = new ReceiverHealth(policy.scheduleMs);
    this.deferStep = options.committer.channel<DeferStep, number>(async (trx, items) => {
      const out: number[] = [];
      for (const p of items) {
        const scope = receiverOf(p.receiver);
        await eventsRepository.failExpired(trx, scope, p.now - policy.maxAgeMs, p.now);
        out.push(await eventsRepository.defer(trx, scope, p.until, p.now, DEFER_CHUNK));
      }
      return out;
    });
  }

  /** Receivers paused now (at most `max`), as devices (their own webhook_url) and webhooks: a claim leaves them out. */
  paused(now: number, max: number): { devices: number[]; webhooks: string[] } {
    const devices: number[] = [];
    const webhooks: string[] = [];
    for (const key of this.health.paused(now, max)) {
      const receiver = receiverOf(key);
      if ('deviceId' in receiver) devices.push(receiver.deviceId);
      else webhooks.push(receiver.webhookId);
    }
    return { devices, webhooks };
  }

  /** A delivery to the receiver was made due by hand: it gets an attempt even if paused. */
  resume(receiver: ReceiverKey): void {
    this.health.resume(receiver);
  }

  /** Moves of paused receivers' backlogs under way (shutdown waits for them). */
  underWay(): Promise<void>[] {
    return [...this.deferrals.values()];
  }

  /** The completion of an answered attempt. */
  of({ event, url, format, note, attemptedAt, result }: Answered): Completion {
    const { logger, clock, policy } = this.options;
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
    const receiver = receiverKey(event);
    // Which receiver, for the log: the device's (its own webhook_url) or an account webhook.
    const who = event.webhook_id === null ? { deviceId } : { deviceId, webhookId: event.webhook_id };
    if (result.ok) {
      if (this.health.succeeded(receiver)) logger.info(who, 'webhook receiver answering again');
      return { id: event.id, attempt, outcome: 'delivered' };
    }
    const now = clock.now();
    const attempts = event.attempts + 1;
    const verdict = this.health.failed(receiver, now);
    // Never the URL (it may carry a token) nor the receiver's answer (it may echo message content).
    const why = result.httpStatus === null ? { error: result.error } : { status: result.httpStatus };
    const decision = afterFailure(policy, attempts, event.created_at, now);
    if ('giveUp' in decision) {
      logger.warn({ eventId: event.id, ...who, attempts, ...why }, 'webhook delivery failed for good');
      this.receiverVerdict(receiver, verdict, why);
      return { id: event.id, attempt, outcome: 'failed' };
    }
    // A paused receiver is not tried before its pause ends, but never past the give-up deadline.
    const retryAt = Math.min(Math.max(decision.retryAt, verdict.pausedUntil), event.created_at + policy.maxAgeMs);
    logger.info({ eventId: event.id, ...who, attempts, ...why, retry_at: iso(retryAt) }, 'webhook attempt failed');
    this.receiverVerdict(receiver, verdict, why);
    // Wake for it ourselves rather than waiting for the next poll.
    this.options.retryAt(retryAt);
    return { id: event.id, attempt, outcome: 'retry', retryAt };
  }

  /** What a failure means for the receiver as a whole: a pause (its backlog moved past it), a warning. */
  private receiverVerdict(receiver: ReceiverKey, verdict: FailureVerdict, why: object): void {
    const { logger } = this.options;
    const who = receiverOf(receiver);
    if (verdict.warnFailingSince !== null) {
      logger.warn(
        { ...who, failing_since: iso(verdict.warnFailingSince), failures: verdict.failures, ...why },
        'webhook receiver failing for an hour or more',
      );
    }
    if (!verdict.newlyPaused) return;
    logger.info(
      { ...who, failures: verdict.failures, paused_until: iso(verdict.pausedUntil) },
      'webhook receiver keeps failing; its deliveries wait until the pause ends',
    );
    this.deferBacklog(receiver, verdict.pausedUntil);
    this.options.retryAt(verdict.pausedUntil);
  }

  /**
   * Moves the receiver's waiting deliveries to the end of its pause, in short steps, so they leave the
   * due range the claims scan (and fails those past the give-up age). One move per receiver at a time.
   */
  private deferBacklog(receiver: ReceiverKey, until: number): void {
    const { closed } = this.options;
    if (this.deferrals.has(receiver) || closed()) return;
    const run = (async () => {
      for (;;) {
        if (closed() || this.health.pausedUntil(receiver) < until) return;
        const moved = await this.deferStep({ receiver, until, now: this.options.clock.now() });
        if (moved < DEFER_CHUNK) return;
      }
    })()
      .catch((error: unknown) => {
        // The rows stay due: they are attempted (and fail, and are retried) one by one, as without a pause.
        this.options.logger.error(
          { err: error, ...receiverOf(receiver) },
          'moving a paused receiver’s deliveries failed',
        );
      })
      .finally(() => this.deferrals.delete(receiver));
    this.deferrals.set(receiver, run);
  }
}
