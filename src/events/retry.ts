/**
 * When a failed webhook delivery is tried again (docs/internals.md, Webhooks).
 *
 * Owns: the retry schedule (about 5 s, 30 s, 2 min, 10 min, 30 min, 1 h, then
 * every 2 h), its jitter, and the give-up rule (24 h after the event was
 * created). Pure functions: the deliverer calls them, tests pass their own
 * schedule.
 * Must never: touch the store or the clock; time comes in as arguments.
 */

export const DEFAULT_RETRY_SCHEDULE_MS: readonly number[] = [
  5_000,
  30_000,
  2 * 60_000,
  10 * 60_000,
  30 * 60_000,
  60 * 60_000,
  2 * 60 * 60_000,
];

export const DEFAULT_MAX_AGE_MS = 24 * 60 * 60_000;

/** Each wait is scaled by a random factor in [1 - JITTER, 1 + JITTER], so receivers that failed together do not get their retries together. */
const JITTER = 0.2;

export interface RetryPolicy {
  /** Wait after the 1st, 2nd, ... failed attempt; the last entry repeats. */
  readonly scheduleMs: readonly number[];
  /** Give up this long after the event was created. */
  readonly maxAgeMs: number;
}

export type RetryDecision = { readonly retryAt: number } | { readonly giveUp: true };

/**
 * After a failed attempt (the `attempts`-th, counting it) at `now` of an event
 * created at `createdAt`: when to try again, or give up. The last try happens
 * at the deadline itself rather than being skipped when a wait overshoots it.
 */
export function afterFailure(
  policy: RetryPolicy,
  attempts: number,
  createdAt: number,
  now: number,
  random: () => number = Math.random,
): RetryDecision {
  const deadline = createdAt + policy.maxAgeMs;
  if (now >= deadline) return { giveUp: true };
  const schedule = policy.scheduleMs;
  const base = schedule[Math.min(Math.max(attempts, 1), schedule.length) - 1] ?? 0;
  const wait = base * (1 - JITTER + 2 * JITTER * random());
  return { retryAt: Math.min(deadline, Math.round(now + wait)) };
}
