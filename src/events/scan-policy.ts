/**
 * Which scan a webhook claim makes, and when a ring is worth a claim (docs/internals.md, Webhooks). A claim that
 * looks past lanes at their bound (ClaimParams.pastFullLanes) walks the whole backlog of those lanes, however long:
 * on a store this process owns, such a full scan runs only when a scan of the first due rows left lanes at their
 * bound and did not see every due row, and then at most every `everyMs`, so a lane hidden behind a longer backlog of
 * held-back lanes waits that long at most. With other processes on the store every scan is a full one (lanes may be
 * at their bound unseen here).
 *
 * Owns: that choice and its state (when the last full scan ran, whether one is wanted), and the spacing of claims
 * answering rings while lanes are at their bound.
 * Must never: let a full scan that is wanted wait past `everyMs` after the last one, nor a ring go unanswered.
 */

/** How often at most a claim looks past lanes at their bound (capped by the poll interval). */
export const FULL_SCAN_EVERY_MS = 100;
/** While lanes are at their bound, rings within this long of a claim are answered by one claim at its end. */
export const RING_EVERY_MS = 20;

export class ScanPolicy {
  private lastFullScanAt = -Infinity;
  /** A scan of the first due rows left lanes at their bound and did not see every due row. */
  private wanted = true;

  constructor(
    private readonly everyMs: number,
    private readonly sharedStore: boolean,
  ) {}

  /** Whether the claim cycle starting at `now` looks past lanes at their bound (the whole cycle makes one kind). */
  cycle(now: number): boolean {
    if (!this.sharedStore && !(this.wanted && now - this.lastFullScanAt >= this.everyMs)) return false;
    this.lastFullScanAt = now;
    this.wanted = false;
    return true;
  }

  /** After a claim: when a full scan should run (epoch ms), or null when none is wanted. */
  afterClaim(lanesBound: boolean, truncated: boolean): number | null {
    if (!lanesBound || !truncated) return null;
    this.wanted = true;
    return this.lastFullScanAt + this.everyMs;
  }
}

/** When a ring at `now` should be answered: null for at once, else the time of one claim for the rings until then. */
export function ringAnsweredAt(now: number, lanesBound: boolean, lastClaimAt: number): number | null {
  return lanesBound && now - lastClaimAt < RING_EVERY_MS ? lastClaimAt + RING_EVERY_MS : null;
}
