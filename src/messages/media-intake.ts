/**
 * Taking in a message's media (issue 10, item 18): the download goes to the
 * chunk store (src/media/) as it arrives, so accepting a file costs a chunk
 * of memory whatever its size, and only so many downloads run at once.
 *
 * Owns: the cap on concurrent downloads (FETCH_SLOTS, with at most
 * FETCH_QUEUE waiting for a slot; beyond that the caller is told to come
 * back), and discarding what was written when the media becomes no message
 * (what a crash leaves is swept by MediaUpkeep).
 * Must never: hold more than a chunk (plus what is in flight on the socket)
 * of one download in memory, or leave chunks behind on a failure it sees.
 */
import type { Dispatcher as HttpDispatcher } from 'undici';
import type { Clock } from '../clock.js';
import { newUlid } from '../ids.js';
import { ChunkWriter, deleteMedia } from '../media/index.js';
import { streamMedia, type StreamedMedia } from '../outbound/index.js';
import type { Store } from '../store/store.js';

export const FETCH_SLOTS = 4;
export const FETCH_QUEUE = 64;

/** Too many downloads are running or waiting; the caller should try again shortly. */
export class MediaBusyError extends Error {
  override readonly name = 'MediaBusyError';
}

export interface IntakeOptions {
  readonly store: Store;
  readonly clock: Clock;
  readonly dispatcher: HttpDispatcher;
  readonly timeoutMs: number;
}

export class MediaIntake {
  private running = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(private readonly options: IntakeOptions) {}

  /**
   * Downloads `url` into the store. Resolves with the media id and what the format is judged by;
   * throws MediaFetchError (nothing kept), MediaBusyError, or a store error.
   */
  async take(url: string, maxBytes: number): Promise<{ mediaId: string; streamed: StreamedMedia }> {
    await this.slot();
    const writer = new ChunkWriter(this.options.store.db, this.options.clock, newUlid());
    try {
      const streamed = await streamMedia(
        url,
        { maxBytes, timeoutMs: this.options.timeoutMs, dispatcher: this.options.dispatcher },
        writer,
      );
      await writer.finish();
      return { mediaId: writer.mediaId, streamed };
    } catch (error) {
      await this.discard(writer.mediaId);
      throw error;
    } finally {
      this.release();
    }
  }

  /** The media will not be a message's: its chunks go (a failure here leaves them to the sweep). */
  async discard(mediaId: string): Promise<void> {
    await deleteMedia(this.options.store.db, [mediaId]).catch(() => undefined);
  }

  private slot(): Promise<void> {
    if (this.running < FETCH_SLOTS) {
      this.running++;
      return Promise.resolve();
    }
    if (this.waiting.length >= FETCH_QUEUE) return Promise.reject(new MediaBusyError());
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  private release(): void {
    const next = this.waiting.shift();
    if (next !== undefined) next();
    else this.running--;
  }
}
