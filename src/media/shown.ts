/**
 * Incoming media as the message object and its events show it (DECISIONS 15): `file_url` the gateway's signed URL
 * of the media (null when there never will be bytes to fetch: `too_large`, `failed`) and
 * `media: {status, mimetype, size, file_name, sha256}`.
 *
 * Owns: that shape, made from a row. Must never: read bytes, or sign a URL for media of another message.
 */
import type { Db } from '../store/schema.js';
import type { Store } from '../store/store.js';
import { incomingMediaRepository, type IncomingMediaRow, type IncomingMediaStatus } from './incoming-repository.js';
import type { MediaLinks } from './links.js';

/** An incoming message's media as shown: its signed URL (null: nothing to fetch) and its facts. */
export interface ShownMedia {
  readonly fileUrl: string | null;
  readonly media: {
    readonly status: IncomingMediaStatus;
    readonly mimetype: string;
    readonly size: number | null;
    readonly file_name: string | null;
    readonly sha256: string | null;
  };
}

export function shownMedia(row: IncomingMediaRow, links: MediaLinks): ShownMedia {
  const fetchable = row.status === 'pending' || row.status === 'stored' || row.status === 'expired';
  return {
    fileUrl: fetchable ? links.signedUrl(row.media_id) : null,
    media: {
      status: row.status,
      mimetype: row.mimetype,
      size: row.size,
      file_name: row.file_name,
      sha256: row.sha256,
    },
  };
}

/** The media of messages as shown, read from the store (MessageReads' port). */
export function mediaOfMessages(store: Store, links: MediaLinks) {
  return {
    async shown(messageIds: readonly string[], db: Db = store.db): Promise<Map<string, ShownMedia>> {
      const rows = await incomingMediaRepository.forMessages(db, messageIds);
      return new Map([...rows].map(([id, row]) => [id, shownMedia(row, links)]));
    },
    plainUrl: (mediaId: string): string => links.plainUrl(mediaId),
  };
}
