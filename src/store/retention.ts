/**
 * Retention (docs/internals.md, Retention): what the store keeps, and for how long.
 *
 *   webhook deliveries that ended (delivered or failed), with their attempts:
 *     GATEWAY_WEBHOOK_RETENTION_DAYS after they ended (default 7; 0 keeps them)
 *   idempotency keys: 24 h after they were taken (an older key no longer
 *     answers anyway; see the messages service)
 *   the event log (src/events/log.ts): GATEWAY_EVENT_RETENTION_DAYS after an
 *     event was recorded (default 7; 0 keeps them), oldest first in log order
 *   messages, with their media: GATEWAY_MESSAGE_RETENTION_DAYS after they were
 *     accepted or received (default 0: kept for ever); a message still queued
 *     is never deleted
 *
 * Owns: when clean-up runs and how much it takes at once. A sweep starts
 * every `intervalMs`; it deletes in batches of `batchSize` rows, each batch a
 * short transaction of its own found through an index, with a pause between
 * batches, so requests and the dispatcher's writes interleave with it and a
 * large backlog is worked off over time instead of in one long lock. A sweep
 * that fails (the store is down) is logged and tried again at the next one.
 * Messages are deleted through `deleteMessages`, which the messages feature
 * fills (src/messages/retention-repository.ts): the store is the floor and
 * never imports a feature.
 * Must never: delete a delivery still pending or a message still queued, or
 * run two sweeps at once.
 */
import type { FastifyBaseLogger } from 'fastify';
import { encodeTime } from 'ulid';
import type { Clock } from '../clock.js';
import { cleanupRepository } from './cleanup-repository.js';
import type { Db } from './schema.js';
import type { Store } from './store.js';

const DAY_MS = 24 * 60 * 60_000;
export const IDEMPOTENCY_KEY_TTL_MS = DAY_MS;

export interface RetentionSettings {
  /** Days an ended webhook delivery is kept; 0 keeps them. */
  readonly webhookRetentionDays: number;
  /** Days a message is kept; 0 keeps them. */
  readonly messageRetentionDays: number;
  /** Days an event stays in the event log; 0 keeps them (absent: 7). */
  readonly eventRetentionDays?: number;
}

export interface RetentionTimings {
  /** Time between the starts of two sweeps. */
  readonly intervalMs?: number;
  /** Rows per batch (per transaction). */
  readonly batchSize?: number;
  /** Pause between two batches. */
  readonly pauseMs?: number;
}

/**
 * Deletes up to `limit` messages created before `before` that are no longer queued, with what hangs off
 * them, in the transaction `db`; every message id below `idBelow` is older than `before`. Answers how many.
 */
export type DeleteOldMessages = (db: Db, before: number, idBelow: string, limit: number) => Promise<number>;

export interface RetentionOptions extends RetentionSettings, RetentionTimings {
  readonly store: Store;
  /** The messages feature's batch delete (a port: the store does not know what a message holds). */
  readonly deleteMessages: DeleteOldMessages;
  readonly clock: Clock;
  readonly logger: FastifyBaseLogger;
}

/** What one sweep removed. */
export interface SweepReport {
  deliveries: number;
  events: number;
  idempotencyKeys: number;
  messages: number;
  batches: number;
}

export class Retention {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<SweepReport> | null = null;
  private closed = false;
  private readonly intervalMs: number;
  private readonly batchSize: number;
  private readonly pauseMs: number;

  constructor(private readonly options: RetentionOptions) {
    this.intervalMs = options.intervalMs ?? 10 * 60_000;
    this.batchSize = options.batchSize ?? 500;
    this.pauseMs = options.pauseMs ?? 20;
  }

  /** Sweeps once soon after start-up, then every `intervalMs`. */
  start(): void {
    this.arm(Math.min(this.intervalMs, 5_000));
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    await this.running?.catch(() => undefined);
  }

  /** One sweep now (or the one already running): every kind until nothing old is left. */
  sweep(): Promise<SweepReport> {
    if (this.running === null) {
      this.running = this.sweepAll().finally(() => {
        this.running = null;
      });
    }
    return this.running;
  }

  private arm(delayMs: number): void {
    if (this.closed) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.sweep()
        .then((report) => {
          const removed = report.deliveries + report.events + report.idempotencyKeys + report.messages;
          if (removed > 0) this.options.logger.info({ ...report }, 'retention: old records deleted');
        })
        .catch((error: unknown) =>
          this.options.logger.warn({ err: error }, 'retention sweep failed; trying again at the next one'),
        )
        .finally(() => this.arm(this.intervalMs));
    }, delayMs);
    this.timer.unref();
  }

  private async sweepAll(): Promise<SweepReport> {
    const { clock, webhookRetentionDays, messageRetentionDays } = this.options;
    const report: SweepReport = { deliveries: 0, events: 0, idempotencyKeys: 0, messages: 0, batches: 0 };
    const now = clock.now();
    if (webhookRetentionDays > 0) {
      const before = now - webhookRetentionDays * DAY_MS;
      report.deliveries = await this.inBatches(report, (db, limit) =>
        cleanupRepository.deleteEndedDeliveries(db, before, limit),
      );
    }
    const eventRetentionDays = this.options.eventRetentionDays ?? 7;
    if (eventRetentionDays > 0) {
      const before = now - eventRetentionDays * DAY_MS;
      report.events = await this.inBatches(report, (db, limit) => cleanupRepository.deleteOldEvents(db, before, limit));
    }
    const keysBefore = now - IDEMPOTENCY_KEY_TTL_MS;
    report.idempotencyKeys = await this.inBatches(report, (db, limit) =>
      cleanupRepository.deleteIdempotencyKeys(db, keysBefore, limit),
    );
    if (messageRetentionDays > 0) {
      const before = now - messageRetentionDays * DAY_MS;
      // Every id below this ULID was drawn before `before`: the primary key finds them.
      const idBelow = encodeTime(before, 10) + '0'.repeat(16);
      report.messages = await this.inBatches(report, (db, limit) =>
        this.options.deleteMessages(db, before, idBelow, limit),
      );
    }
    return report;
  }

  /** Runs `batch` in transactions of its own until it takes fewer than a full batch; answers the total. */
  private async inBatches(report: SweepReport, batch: (db: Db, limit: number) => Promise<number>): Promise<number> {
    let total = 0;
    for (;;) {
      if (this.closed) return total;
      const removed = await this.options.store.db.transaction().execute((trx) => batch(trx, this.batchSize));
      report.batches += 1;
      total += removed;
      if (removed < this.batchSize) return total;
      await new Promise((resolve) => setTimeout(resolve, this.pauseMs));
    }
  }
}
