/**
 * SQL for media bytes kept in the store: the `media_chunks` table.
 *
 * Owns: every statement that writes, reads or deletes a chunk, and the sum of
 * bytes held. A piece of media is a `media_id` and its chunks in order
 * (`seq`), each at most CHUNK_BYTES (chunks.ts), with its length in `size`
 * (009c) so that layouts and totals are read from an index, never from the
 * bytes.
 * Must never: read more than one chunk's bytes in a statement, or decide when
 * media is no longer needed (its owners say so: see chunks.ts).
 */
import { sql } from 'kysely';
import type { Db } from '../store/schema.js';

export const mediaRepository = {
  insertChunk: async (db: Db, mediaId: string, seq: number, bytes: Uint8Array, now: number): Promise<void> => {
    await db
      .insertInto('media_chunks')
      .values({ media_id: mediaId, seq, bytes, size: bytes.byteLength, created_at: now })
      .execute();
  },

  /** The chunks of one piece of media, in order, without their bytes (the index `media_chunks_sizes` answers it). */
  layout: async (db: Db, mediaId: string): Promise<Array<{ seq: number; size: number }>> =>
    (
      await db
        .selectFrom('media_chunks')
        .select(['seq', 'size'])
        .where('media_id', '=', mediaId)
        .orderBy('seq')
        .execute()
    ).map((row) => ({ seq: Number(row.seq), size: Number(row.size) })),

  /** One chunk's bytes, or undefined once the media was deleted. */
  chunk: async (db: Db, mediaId: string, seq: number): Promise<Uint8Array | undefined> =>
    (
      await db
        .selectFrom('media_chunks')
        .select('bytes')
        .where('media_id', '=', mediaId)
        .where('seq', '=', seq)
        .executeTakeFirst()
    )?.bytes,

  /**
   * Copies one chunk of `from` as the same chunk of `to`, inside the store (its bytes never pass through the
   * gateway); false when `from` has no such chunk (deleted meanwhile).
   */
  copyChunk: async (db: Db, from: string, to: string, seq: number, now: number): Promise<boolean> => {
    const result = await db
      .insertInto('media_chunks')
      .columns(['media_id', 'seq', 'bytes', 'size', 'created_at'])
      .expression(
        db
          .selectFrom('media_chunks')
          .select([
            sql<string>`cast(${to} as text)`.as('media_id'),
            'seq',
            'bytes',
            'size',
            sql<number>`cast(${now} as bigint)`.as('created_at'),
          ])
          .where('media_id', '=', from)
          .where('seq', '=', seq),
      )
      .executeTakeFirst();
    return Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
  },

  deleteMany: async (db: Db, mediaIds: readonly string[]): Promise<void> => {
    if (mediaIds.length === 0) return;
    await db.deleteFrom('media_chunks').where('media_id', 'in', mediaIds).execute();
  },

  /**
   * Chunks written before `before` that no owner names: a download that ended in no message and whose clean-up
   * was cut short (a crash between download and acceptance). The owners of media ids: `message_media` (media of
   * messages to send) and `incoming_media` (media received).
   */
  deleteUnowned: async (db: Db, before: number): Promise<number> => {
    const result = await db
      .deleteFrom('media_chunks')
      .where('created_at', '<', before)
      .where((eb) =>
        eb.not(
          eb.or([
            eb.exists(
              eb
                .selectFrom('message_media')
                .select('message_id')
                .whereRef('message_media.media_id', '=', 'media_chunks.media_id'),
            ),
            eb.exists(
              eb
                .selectFrom('incoming_media')
                .select('message_id')
                .whereRef('incoming_media.media_id', '=', 'media_chunks.media_id'),
            ),
          ]),
        ),
      )
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  },

  /** Bytes of media held, summed from the index (one row per chunk: a MiB of media costs one index entry). */
  bytesHeld: async (db: Db): Promise<number> => {
    const row = await db
      .selectFrom('media_chunks')
      .select((eb) => eb.fn.coalesce(eb.fn.sum<number | string>('size'), eb.lit(0)).as('bytes'))
      .executeTakeFirstOrThrow();
    return Number(row.bytes);
  },
};
