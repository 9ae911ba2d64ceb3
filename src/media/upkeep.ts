/**
 * Background upkeep of the chunk store: chunks nobody owns are deleted, and
 * the file space that deleted media leaves is given back (docs/media-storage.md).
 *
 * Owns: when the unowned-chunk sweep runs (at start and every SWEEP_EVERY_MS)
 * and how free space is released on SQLite: pages freed by deletes are reused
 * by the next writes in any case; every RECLAIM_EVERY_MS, free space above
 * `keepFreeBytes` is given back to the file system in steps of STEP_PAGES, each
 * step its own short statement between the gateway's transactions.
 * PostgreSQL needs none of it (plain deletes; its autovacuum makes the space
 * reusable).
 * Must never: delete the chunks of a download still under way (only chunks far
 * older than any download may take), block the event loop for more than a step,
 * or let a failure escape (the next round tries again).
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../clock.js';
import type { Store } from '../store/store.js';
import { mediaRepository } from './repository.js';

/** Far longer than any download may take (its deadline is seconds): unowned chunks this old are orphans. */
const ORPHAN_AGE_MS = 60 * 60_000;
const SWEEP_EVERY_MS = 60 * 60_000;
const RECLAIM_EVERY_MS = 30_000;
/** Pages given back per statement (4 MiB at SQLite's default page size). */
const STEP_PAGES = 1024;
/** Free space kept for the next writes rather than given back and taken again at once. */
export const KEEP_FREE_BYTES = 32 * 1024 * 1024;

export interface MediaUpkeepOptions {
  readonly store: Store;
  readonly clock: Clock;
  readonly logger: FastifyBaseLogger;
  readonly keepFreeBytes?: number;
}

export class MediaUpkeep {
  private timers: NodeJS.Timeout[] = [];
  private reclaiming: Promise<number> | null = null;
  private closed = false;
  private readonly keepFreeBytes: number;

  constructor(private readonly options: MediaUpkeepOptions) {
    this.keepFreeBytes = options.keepFreeBytes ?? KEEP_FREE_BYTES;
  }

  start(): void {
    const sweep = () =>
      void this.sweep().catch((error: unknown) =>
        this.options.logger.warn({ err: error }, 'media: sweep of unowned chunks failed; trying again later'),
      );
    const reclaim = () =>
      void this.reclaim().catch((error: unknown) =>
        this.options.logger.warn({ err: error }, 'media: giving back free space failed; trying again later'),
      );
    sweep();
    this.timers.push(setInterval(sweep, SWEEP_EVERY_MS), setInterval(reclaim, RECLAIM_EVERY_MS));
    for (const timer of this.timers) timer.unref();
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const timer of this.timers) clearInterval(timer);
    this.timers = [];
    await this.reclaiming?.catch(() => undefined);
  }

  /** Deletes chunks no owner names that are older than any download can be; answers how many. */
  sweep(): Promise<number> {
    return mediaRepository.deleteUnowned(this.options.store.db, this.options.clock.now() - ORPHAN_AGE_MS);
  }

  /**
   * Gives free space above `keepFreeBytes` back to the file system (SQLite), a step at a time; answers the bytes
   * given back. One run at a time: a call during a run joins it.
   */
  reclaim(): Promise<number> {
    this.reclaiming ??= this.release().finally(() => {
      this.reclaiming = null;
    });
    return this.reclaiming;
  }

  private async release(): Promise<number> {
    const space = this.options.store.space;
    if (space === null) return 0;
    let released = 0;
    while (!this.closed && (await space.freeBytes()) > this.keepFreeBytes) {
      const step = await space.release(STEP_PAGES);
      if (step === 0) break; // the file does not free pages on request (see SqliteSpace.release)
      released += step;
      // Requests and sends run between two steps.
      await new Promise((resolve) => setImmediate(resolve));
    }
    if (released > 0) {
      // The file shrinks when the log is copied into it: now, not after another 1,000 pages of writes.
      await space.checkpoint();
      this.options.logger.debug({ bytes: released }, 'media: free space given back');
    }
    return released;
  }
}
