/**
 * Retention of incoming media (DECISIONS 15): bytes stored longer than `GATEWAY_INCOMING_MEDIA_RETENTION_DAYS` are
 * deleted and their row marked `expired` (`/media/{id}` then answers 410 `Media expired`); the media of messages
 * deleted by message retention goes with them, row and bytes.
 *
 * Owns: when that runs (at start and every EVERY_MS) and its batches (each a short statement or two).
 * Must never: delete the bytes of media still within its days, or let a failure escape (the next round tries again).
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../clock.js';
import type { Store } from '../store/store.js';
import { deleteMedia } from './chunks.js';
import { incomingMediaRepository } from './incoming-repository.js';

const EVERY_MS = 10 * 60_000;
const BATCH = 200;
const DAY_MS = 86_400_000;

export interface MediaExpiryOptions {
  readonly store: Store;
  readonly clock: Clock;
  readonly logger: FastifyBaseLogger;
  /** 0 keeps incoming media for ever. */
  readonly retentionDays: number;
}

export class MediaExpiry {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<number> | null = null;

  constructor(private readonly options: MediaExpiryOptions) {}

  start(): void {
    const round = () =>
      void this.run().catch((error: unknown) =>
        this.options.logger.warn({ err: error }, 'media: expiry of incoming media failed; trying again later'),
      );
    round();
    this.timer = setInterval(round, EVERY_MS);
    this.timer.unref();
  }

  async close(): Promise<void> {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    await this.running?.catch(() => undefined);
  }

  /** One round; answers how many pieces of media lost their bytes. A call during a round joins it. */
  run(): Promise<number> {
    this.running ??= this.expire().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  private async expire(): Promise<number> {
    const { store, clock, retentionDays } = this.options;
    let expired = 0;
    if (retentionDays > 0) {
      const before = clock.now() - retentionDays * DAY_MS;
      for (;;) {
        const ids = await incomingMediaRepository.storedBefore(store.db, before, BATCH);
        if (ids.length === 0) break;
        // Marked first: a request between the two statements answers 410 rather than finding no bytes.
        await incomingMediaRepository.markExpired(store.db, ids);
        await deleteMedia(store.db, ids);
        expired += ids.length;
      }
    }
    for (;;) {
      const orphans = await incomingMediaRepository.orphans(store.db, BATCH);
      if (orphans.length === 0) break;
      await deleteMedia(store.db, orphans);
      await incomingMediaRepository.deleteRows(store.db, orphans);
    }
    return expired;
  }
}
