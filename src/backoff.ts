/**
 * How long to wait before trying again: the one place the gateway's retry waits are shaped (the dispatcher's send
 * retries, the store retries of writes that have no other copy, the cluster listener's reconnects, the devices'
 * reconnects).
 *
 * Owns: doubling a wait up to a ceiling, and spreading waits so that many retries started together do not come back
 * together ("equal jitter": between half the wait and all of it).
 * Must never: read the time or wait itself (callers wait through their clock).
 */

/** The wait before the `attempt`-th retry (1-based): `firstMs` doubled per attempt, at most `maxMs`. */
export function doubling(firstMs: number, maxMs: number, attempt: number): number {
  return Math.min(maxMs, firstMs * 2 ** Math.min(Math.max(attempt, 1) - 1, 30));
}

/** A wait between half of `ms` and all of it, chosen at random. */
export function jitter(ms: number, random: () => number = Math.random): number {
  return ms / 2 + random() * (ms / 2);
}
