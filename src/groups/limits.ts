/**
 * The numbers of group member addition (spec 8, docs/internals.md, Groups) and the
 * arithmetic of their windows.
 *
 * Owns: the limits themselves, what "a minute" and "a day" mean (a sliding
 * 60 s window; the UTC calendar day) and the Retry-After a refused request is
 * told. Must never: read the clock or the store; callers pass `now` and the
 * counts they read under the group's lock.
 */

/** Participants in one members-add request. */
export const MAX_PARTICIPANTS_PER_REQUEST = 20;
/** Members-add requests admitted per group in any 60 s. */
export const REQUESTS_PER_MINUTE = 10;
export const MINUTE_MS = 60_000;
/** Members added per group per UTC day. */
export const DAILY_ADDITIONS = 500;
export const DAY_MS = 86_400_000;
/** Group size, when the network does not say (spec 8). */
export const DEFAULT_GROUP_CAPACITY = 1024;

/** The UTC day `now` falls in, as days since the epoch. */
export function utcDay(now: number): number {
  return Math.floor(now / DAY_MS);
}

/** Requests at or before this time no longer count in the window of `now`. */
export function windowStart(now: number): number {
  return now - MINUTE_MS;
}

/** Whole seconds, at least 1, until `until`: what Retry-After says. */
export function retryAfterSeconds(now: number, until: number): number {
  return Math.max(1, Math.ceil((until - now) / 1000));
}

/** When a slot of the minute window frees up, given the oldest admitted request still in it. */
export function minuteSlotFreesAt(oldestInWindow: number): number {
  return oldestInWindow + MINUTE_MS;
}

/** When the daily budget starts again: the next UTC midnight. */
export function nextUtcMidnight(now: number): number {
  return (utcDay(now) + 1) * DAY_MS;
}

export type Admission =
  | { readonly admitted: true; readonly reserved: number }
  | { readonly admitted: false; readonly retryAfterS: number; readonly reason: 'minute' | 'day' };

/**
 * Decides one request under the group's lock: refused when the minute window
 * is full or nothing is left of the day's budget; otherwise admitted with as
 * many of the `wanted` additions reserved as the budget allows (in request
 * order; the rest fail RATE_LIMITED).
 */
export function admit(input: {
  readonly now: number;
  readonly requestsInWindow: number;
  readonly oldestInWindow: number | null;
  readonly usedToday: number;
  readonly wanted: number;
}): Admission {
  const { now } = input;
  if (input.requestsInWindow >= REQUESTS_PER_MINUTE) {
    const freesAt = minuteSlotFreesAt(input.oldestInWindow ?? now);
    return { admitted: false, reason: 'minute', retryAfterS: retryAfterSeconds(now, freesAt) };
  }
  const left = Math.max(0, DAILY_ADDITIONS - input.usedToday);
  if (left === 0) return { admitted: false, reason: 'day', retryAfterS: retryAfterSeconds(now, nextUtcMidnight(now)) };
  return { admitted: true, reserved: Math.min(left, input.wanted) };
}
