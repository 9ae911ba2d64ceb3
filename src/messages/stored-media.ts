/**
 * A message's media read from the store at send time (issue 10, item 18): the
 * network gets a MediaSource over the stored chunks, and each chunk is read
 * by its own query only when the network asks for it.
 *
 * Owns: turning a message's stored media into the seam's MediaSource, and
 * what a read does when the bytes went away under it (the message ended
 * meanwhile): it throws MediaGoneError, which the send treats as any failed
 * attempt.
 * Must never: read a whole file into memory (but for a row from before
 * chunks existed, which was stored whole and is read whole), or cache chunks
 * between reads: a retry reads the store again.
 */
import type { MediaSource } from '../network/network.js';
import type { Db } from '../store/schema.js';
import { messagesRepository } from './repository.js';

const LEGACY_CHUNK_BYTES = 1024 * 1024;

/** The stored bytes were deleted while a read was under way. */
export class MediaGoneError extends Error {
  override readonly name = 'MediaGoneError';
  constructor() {
    super('the media of this message is no longer stored');
  }
}

export interface StoredMedia {
  readonly mimetype: string;
  readonly source: MediaSource;
}

/** The message's media as a source over the store, or undefined if it has none stored. */
export async function storedMedia(db: Db, messageId: string): Promise<StoredMedia | undefined> {
  const layout = await messagesRepository.mediaLayout(db, messageId);
  if (layout === undefined) return undefined;
  if (layout.mediaId === null) {
    return {
      mimetype: layout.mimetype,
      source: {
        size: layout.size,
        async *open() {
          const bytes = await messagesRepository.legacyMediaBytes(db, messageId);
          if (bytes === undefined) throw new MediaGoneError();
          // Already whole in memory; handed on in chunk-sized views, as the seam promises.
          for (let at = 0; at < bytes.length; at += LEGACY_CHUNK_BYTES)
            yield bytes.subarray(at, at + LEGACY_CHUNK_BYTES);
        },
      },
    };
  }
  const { mediaId, chunks } = layout;
  // Every download has at least one row (media-intake): none left means the bytes were deleted.
  if (chunks.length === 0) return undefined;
  return {
    mimetype: layout.mimetype,
    source: {
      size: chunks.reduce((sum, chunk) => sum + chunk.size, 0),
      async *open() {
        for (const { seq } of chunks) {
          const bytes = await messagesRepository.mediaChunk(db, mediaId, seq);
          if (bytes === undefined) throw new MediaGoneError();
          yield bytes;
        }
      },
    },
  };
}
