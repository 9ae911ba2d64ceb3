/**
 * A message's media read from the store at send time (issue 10, item 18): the
 * network gets a MediaSource over the chunk store (src/media/), and each chunk
 * is read by its own query only when the network asks for it.
 *
 * Owns: finding which stored media is the message's (`message_media`) and its
 * type. What a read does when the bytes went away under it (the message ended
 * meanwhile) is the chunk store's: it throws MediaGoneError, which the send
 * treats as any failed attempt.
 * Must never: read media bytes itself (only src/media/ does).
 */
import { mediaSource } from '../media/index.js';
import type { MediaSource } from '../network/network.js';
import type { Db } from '../store/schema.js';
import { messageMediaRepository } from './media-repository.js';

export interface StoredMedia {
  readonly mimetype: string;
  readonly source: MediaSource;
}

/** The message's media as a source over the store, or undefined if it has none stored. */
export async function storedMedia(db: Db, messageId: string): Promise<StoredMedia | undefined> {
  const media = await messageMediaRepository.mediaOf(db, messageId);
  if (media === undefined) return undefined;
  const source = await mediaSource(db, media.mediaId);
  return source === undefined ? undefined : { mimetype: media.mimetype, source };
}
