/**
 * SQL for `message_media`: which stored media (src/media/, in chunks) is a message's, and its type.
 *
 * Owns: that table; deleting a row also deletes the media's bytes through src/media/.
 * Must never: read or write the bytes themselves, or decide when media is no longer needed (the status changes do).
 */
import { deleteMedia } from '../media/index.js';
import type { Db } from '../store/schema.js';

export const messageMediaRepository = {
  /** The message's media: streamed chunks (`mediaId`), written before acceptance. */
  insertMedia: async (db: Db, messageId: string, mimetype: string, mediaId: string): Promise<void> => {
    await db
      .insertInto('message_media')
      .values({ message_id: messageId, mimetype, bytes: new Uint8Array(0), media_id: mediaId })
      .execute();
  },

  /** Which stored media is the message's (src/media/), and its type; undefined once it was deleted. */
  mediaOf: async (db: Db, messageId: string): Promise<{ mimetype: string; mediaId: string } | undefined> => {
    const row = await db
      .selectFrom('message_media')
      .select(['mimetype', 'media_id'])
      .where('message_id', '=', messageId)
      .executeTakeFirst();
    // Every row names its chunks since 009c.
    return row === undefined || row.media_id === null ? undefined : { mimetype: row.mimetype, mediaId: row.media_id };
  },

  /** The message's media is no longer needed: its row, and its bytes in the chunk store. */
  deleteMedia: (db: Db, messageId: string): Promise<void> => messageMediaRepository.deleteMediaOf(db, [messageId]),

  /** deleteMedia for many messages at once. */
  deleteMediaOf: async (db: Db, messageIds: readonly string[]): Promise<void> => {
    if (messageIds.length === 0) return;
    const rows = await db
      .deleteFrom('message_media')
      .where('message_id', 'in', messageIds)
      .returning('media_id')
      .execute();
    await deleteMedia(
      db,
      rows.flatMap((row) => (row.media_id === null ? [] : [row.media_id])),
    );
  },
};
