/**
 * The chunk store: media bytes kept in the store's `media_chunks` table, in
 * chunks of at most CHUNK_BYTES, so that no piece of media is ever written
 * or read as one value, whatever its size (issue 10 item 18, issue 22 item 6;
 * docs/media-storage.md). Media to send is spooled here while its message is
 * queued; media received will be kept the same way.
 *
 * Owns: cutting a stream into chunks as it arrives (ChunkWriter), reading a
 * piece of media back as the network seam's MediaSource one chunk per query,
 * and deleting it. Nothing outside src/media/ reads or writes media bytes.
 * Must never: hold more than a chunk of one piece of media in memory, cache
 * chunks between reads (a retry reads the store again), or decide when media
 * is no longer needed (its owner deletes it: the message, when it ends).
 */
import type { Clock } from '../clock.js';
import type { MediaSource } from '../network/network.js';
import type { Db } from '../store/schema.js';
import { mediaRepository } from './repository.js';
import { chunkReadNext, mediaBytesMoved } from './young-garbage.js';

export const CHUNK_BYTES = 1024 * 1024;

/** The stored bytes were deleted while a read was under way (their message ended meanwhile). */
export class MediaGoneError extends Error {
  override readonly name = 'MediaGoneError';
  constructor() {
    super('the media of this message is no longer stored');
  }
}

/**
 * Writes a stream into chunks of CHUNK_BYTES, in order, each row its own short statement (outside any other
 * transaction, so a long download holds no lock). `finish` writes the rest. The bytes are copied once, into one
 * chunk-sized buffer the writer reuses for every row (the store has taken its copy when an insert resolves), so a
 * download makes no garbage of its own whatever its size.
 */
export class ChunkWriter {
  /** The row being filled; allocated on the first byte, reused for every row. */
  private row: Buffer | null = null;
  private filled = 0;
  private seq = 0;
  private written = 0;

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    readonly mediaId: string,
  ) {}

  /** Bytes written to the store so far. */
  get bytesWritten(): number {
    return this.written;
  }

  async write(chunk: Uint8Array): Promise<void> {
    mediaBytesMoved(chunk.byteLength);
    let at = 0;
    while (at < chunk.byteLength) {
      const row = (this.row ??= Buffer.allocUnsafe(CHUNK_BYTES));
      const take = Math.min(chunk.byteLength - at, CHUNK_BYTES - this.filled);
      row.set(chunk.subarray(at, at + take), this.filled);
      this.filled += take;
      at += take;
      if (this.filled === CHUNK_BYTES) await this.flush();
    }
  }

  /**
   * Writes the rest. Empty media still gets one (empty) row, so that media with no rows always means media
   * deleted, never an empty file.
   */
  async finish(): Promise<void> {
    await this.flush();
    if (this.seq === 0) await this.insert(new Uint8Array(0));
    this.row = null;
  }

  /** Writes what is filled as one row (a view of the reused buffer: the insert copies it before resolving). */
  private async flush(): Promise<void> {
    if (this.filled === 0 || this.row === null) return;
    const bytes = this.row.subarray(0, this.filled);
    this.filled = 0;
    await this.insert(bytes);
  }

  private async insert(row: Uint8Array): Promise<void> {
    await mediaRepository.insertChunk(this.db, this.mediaId, this.seq++, row, this.clock.now());
    this.written += row.byteLength;
  }
}

/**
 * The media as a source over the store, or undefined if none of it is stored (deleted). Only the layout is read
 * here; each `open()` reads the chunks one query at a time as the reader asks for them.
 */
export async function mediaSource(db: Db, mediaId: string): Promise<MediaSource | undefined> {
  const chunks = await mediaRepository.layout(db, mediaId);
  // Every piece of media has at least one row (ChunkWriter.finish): none left means it was deleted.
  if (chunks.length === 0) return undefined;
  return {
    size: chunks.reduce((sum, chunk) => sum + chunk.size, 0),
    async *open() {
      for (const { seq } of chunks) {
        const bytes = await mediaRepository.chunk(db, mediaId, seq);
        if (bytes === undefined) throw new MediaGoneError();
        mediaBytesMoved(bytes.byteLength);
        yield bytes;
      }
    },
  };
}

/**
 * A copy of stored media under a new id (`to`), chunk by chunk, each its own statement copied inside the store, so
 * the copy has an owner of its own (the message it is sent with) and neither outlives nor cuts short the other.
 * False, with nothing kept, when the media is not (or stops being) stored.
 */
export async function copyMedia(db: Db, clock: Clock, from: string, to: string): Promise<boolean> {
  const chunks = await mediaRepository.layout(db, from);
  if (chunks.length === 0) return false;
  for (const { seq } of chunks) {
    if (!(await mediaRepository.copyChunk(db, from, to, seq, clock.now()))) {
      await mediaRepository.deleteMany(db, [to]);
      return false;
    }
  }
  return true;
}

/** Deletes these pieces of media (in the caller's transaction when `db` is one). Their space is reused. */
export function deleteMedia(db: Db, mediaIds: readonly string[]): Promise<void> {
  return mediaRepository.deleteMany(db, mediaIds);
}

/**
 * Bytes `start` to `end` (inclusive) of stored media, read one chunk per query, the chunks before `start` skipped
 * by the layout alone. Throws MediaGoneError when the media is (or goes) missing.
 *
 * `written`, when given, resolves true once everything yielded so far has been written out (false when that is not
 * known, e.g. the reader went away); it is awaited before each next chunk is read, and a chunk known to be written
 * has its memory given back at once (releaseChunk) and V8 asked for a young-generation collection before the next
 * read (young-garbage.ts says why). Without it a chunk waiting in a socket, or what the store's driver was building,
 * was alive at two young-generation collections, which moves it to V8's old generation until a full collection:
 * serving 60 MB from PostgreSQL (whose driver makes V8 collect often) grew the gateway by 70-90 MB.
 */
export async function* readRange(
  db: Db,
  mediaId: string,
  start: number,
  end: number,
  written?: () => Promise<boolean>,
): AsyncGenerator<Uint8Array> {
  const chunks = await mediaRepository.layout(db, mediaId);
  if (chunks.length === 0) throw new MediaGoneError();
  let offset = 0;
  let previous: Uint8Array | undefined;
  for (const { seq, size } of chunks) {
    const from = offset;
    offset += size;
    if (offset <= start || size === 0) continue;
    if (from > end) return;
    if (previous !== undefined && written !== undefined) {
      const held = previous;
      previous = undefined;
      if (await written()) {
        releaseChunk(held);
        chunkReadNext();
      }
    }
    const bytes = await mediaRepository.chunk(db, mediaId, seq);
    if (bytes === undefined) throw new MediaGoneError();
    // With `written`, the collection comes before the next read instead.
    if (written === undefined) mediaBytesMoved(bytes.byteLength);
    previous = bytes;
    const view = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    yield view.subarray(Math.max(0, start - from), Math.min(size, end - from + 1));
  }
}

/** Chunks smaller than this are left to the collector (and a buffer this small may be a slice of a shared pool). */
const RELEASE_MIN_BYTES = 64 * 1024;

/**
 * Gives back the memory of a chunk read from the store that nothing uses any more: its bytes are moved out of the
 * (possibly old) buffer object into a new one that is dropped at once, so the next young-generation collection frees
 * them. Only a buffer that is the chunk's alone (not a slice of a larger one) is touched; every view of it is empty
 * afterwards.
 */
function releaseChunk(bytes: Uint8Array): void {
  const buffer = bytes.buffer;
  if (!(buffer instanceof ArrayBuffer) || bytes.byteOffset !== 0 || buffer.byteLength !== bytes.byteLength) return;
  if (buffer.byteLength < RELEASE_MIN_BYTES) return;
  structuredClone(buffer, { transfer: [buffer] });
}
