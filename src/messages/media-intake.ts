/**
 * Taking in a message's media (issue 10, item 18): the download goes to the
 * store chunk by chunk as it arrives, so accepting a file costs a chunk of
 * memory whatever its size, and only so many downloads run at once.
 *
 * Owns: the chunking (CHUNK_BYTES per row of `media_chunks`), the cap on
 * concurrent downloads (FETCH_SLOTS, with at most FETCH_QUEUE waiting for a
 * slot; beyond that the caller is told to come back), and discarding what
 * was written when the media becomes no message.
 * Must never: hold more than a chunk (plus what is in flight on the socket)
 * of one download in memory, or leave chunks behind on a failure it sees.
 */
import type { Dispatcher as HttpDispatcher } from 'undici';
import type { Clock } from '../clock.js';
import { newUlid } from '../ids.js';
import { streamMedia, type MediaSink, type StreamedMedia } from '../outbound/index.js';
import type { Store } from '../store/store.js';
import { messagesRepository } from './repository.js';

const CHUNK_BYTES = 1024 * 1024;
export const FETCH_SLOTS = 4;
export const FETCH_QUEUE = 64;
/** Far longer than any download may take (its deadline is seconds): chunks this old with no message are orphans. */
const ORPHAN_AGE_MS = 60 * 60_000;
const SWEEP_EVERY_MS = 60 * 60_000;

/** Too many downloads are running or waiting; the caller should try again shortly. */
export class MediaBusyError extends Error {
  override readonly name = 'MediaBusyError';
}

/** Writes a download into `media_chunks` rows of CHUNK_BYTES, in order. */
class ChunkWriter implements MediaSink {
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private seq = 0;

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    readonly mediaId: string,
  ) {}

  async write(chunk: Uint8Array): Promise<void> {
    this.pending.push(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength));
    this.pendingBytes += chunk.byteLength;
    while (this.pendingBytes >= CHUNK_BYTES) await this.flush(CHUNK_BYTES);
  }

  /**
   * Writes the rest. An empty download still gets one (empty) row, so that media with no rows
   * always means media deleted, never an empty file.
   */
  async finish(): Promise<void> {
    await this.flush();
    if (this.seq === 0) {
      await messagesRepository.insertMediaChunk(
        this.store.db,
        this.mediaId,
        this.seq++,
        new Uint8Array(0),
        this.clock.now(),
      );
    }
  }

  /** Writes up to `limit` bytes of what is pending as one row (all of it by default). */
  async flush(limit = Infinity): Promise<void> {
    if (this.pendingBytes === 0) return;
    const all = Buffer.concat(this.pending, this.pendingBytes);
    const size = Math.min(limit, all.length);
    // A copy, not a view: the rest stays pending without pinning the whole concatenation.
    const row = new Uint8Array(all.subarray(0, size));
    const rest = all.subarray(size);
    this.pending = rest.length === 0 ? [] : [Buffer.from(rest)];
    this.pendingBytes = rest.length;
    await messagesRepository.insertMediaChunk(this.store.db, this.mediaId, this.seq++, row, this.clock.now());
  }
}

export interface IntakeOptions {
  readonly store: Store;
  readonly clock: Clock;
  readonly dispatcher: HttpDispatcher;
  readonly timeoutMs: number;
}

export class MediaIntake {
  private running = 0;
  private sweeper: NodeJS.Timeout | null = null;
  private readonly waiting: Array<() => void> = [];

  constructor(private readonly options: IntakeOptions) {}

  /**
   * Downloads `url` into the store. Resolves with the media id and what the format is judged by;
   * throws MediaFetchError (nothing kept), MediaBusyError, or a store error.
   */
  async take(url: string, maxBytes: number): Promise<{ mediaId: string; streamed: StreamedMedia }> {
    await this.slot();
    const writer = new ChunkWriter(this.options.store, this.options.clock, newUlid());
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
    await messagesRepository.deleteMediaChunks(this.options.store.db, mediaId).catch(() => undefined);
  }

  /**
   * Deletes chunks no message names that are older than any download can be (a crash between download
   * and acceptance). Runs at start and then every SWEEP_EVERY_MS until close.
   */
  startSweeping(): void {
    const sweep = () =>
      void messagesRepository
        .deleteOrphanMediaChunks(this.options.store.db, this.options.clock.now() - ORPHAN_AGE_MS)
        .catch(() => undefined);
    sweep();
    this.sweeper = setInterval(sweep, SWEEP_EVERY_MS);
    this.sweeper.unref();
  }

  close(): void {
    if (this.sweeper !== null) clearInterval(this.sweeper);
    this.sweeper = null;
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
