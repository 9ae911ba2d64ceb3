/**
 * Writing something that has no other copy (a message the network handed
 * over, the outcome of a send) until the store takes it: a failed attempt is
 * retried with backoff for as long as it takes, through an outage.
 *
 * Owns: the retry loop, its backoff and its log lines (the first failure, then
 * one in ten, and the recovery).
 * Must never: give up while the caller still runs, or retry a write that
 * committed (an attempt either commits whole or not at all: one transaction).
 */
import type { FastifyBaseLogger } from 'fastify';
import { doubling, jitter } from '../backoff.js';
import { storeFault } from './faults.js';

export interface UntilStoredOptions {
  readonly logger: FastifyBaseLogger;
  /** What is being written, for the log: "the outcome of a send", ... */
  readonly what: string;
  /** Fields for the log lines (ids; never content). */
  readonly context?: Record<string, unknown>;
  /**
   * Asked after a failed attempt: true ends the loop with that attempt's error (the caller is shutting
   * down, or the error says no attempt can ever succeed).
   */
  readonly giveUp: (error: unknown) => boolean;
  readonly firstDelayMs?: number;
  readonly maxDelayMs?: number;
}

export async function untilStored<T>(write: () => Promise<T>, options: UntilStoredOptions): Promise<T> {
  const { logger, what, context = {}, firstDelayMs = 100, maxDelayMs = 2_000 } = options;
  for (let attempt = 1; ; attempt++) {
    try {
      const result = await write();
      if (attempt > 1) logger.info({ ...context, attempts: attempt }, `stored ${what} after the store came back`);
      return result;
    } catch (error) {
      if (options.giveUp(error)) throw error;
      if (attempt === 1 || attempt % 10 === 0) {
        const fault = storeFault(error);
        // A store fault is an outage that ends by itself; anything else is a defect to look into.
        const level = fault === null ? 'error' : 'warn';
        logger[level]({ ...context, err: error, fault: fault?.code, attempt }, `storing ${what} failed; retrying`);
      }
      await new Promise((resolve) => setTimeout(resolve, jitter(doubling(firstDelayMs, maxDelayMs, attempt))));
    }
  }
}
