/**
 * Media bytes only in chunks, with their sizes beside them (issue 22, item 6).
 *
 * - `media_chunks.size`: each chunk's length, filled in for the rows already
 *   there, and an index (`media_id`, `seq`, `size`) from which a media's
 *   layout and the total bytes held are read without touching the bytes (on
 *   SQLite a column after a large blob is reached only through the blob's
 *   overflow pages).
 * - Media stored whole before 007e2 (`message_media.bytes`, messages queued
 *   before that change and still pending) is cut into 1 MiB chunks here, in
 *   SQL, under the media id `legacy-<message id>`, and the whole value is
 *   emptied: afterwards every media byte is read chunk by chunk. Such rows are
 *   rare (only messages queued across that upgrade); SQLite reads each whole
 *   value once per chunk made from it, so a large one takes a while, once.
 */
import { sql, type Kysely } from 'kysely';
import type { MigrationDialect } from './helpers.js';

const CHUNK = 1024 * 1024;

export async function up(db: Kysely<unknown>, dialect: MigrationDialect): Promise<void> {
  await db.schema
    .alterTable('media_chunks')
    .addColumn('size', 'integer', (col) => col.notNull().defaultTo(0))
    .execute();
  await sql`update media_chunks set size = length(bytes)`.execute(db);
  await chunkWholeMedia(db, dialect);
  await db.schema.createIndex('media_chunks_sizes').on('media_chunks').columns(['media_id', 'seq', 'size']).execute();
}

/** Cuts media stored whole (`message_media.bytes`, no `media_id`) into chunks and empties the whole value. */
export async function chunkWholeMedia(db: Kysely<unknown>, dialect: MigrationDialect): Promise<void> {
  const now = Date.now();
  if (dialect.blobType === 'bytea') {
    await sql`
      insert into media_chunks (media_id, seq, bytes, size, created_at)
      select 'legacy-' || m.message_id, part.seq,
             substring(m.bytes from part.seq * ${sql.lit(CHUNK)} + 1 for ${sql.lit(CHUNK)}),
             least(${sql.lit(CHUNK)}, length(m.bytes) - part.seq * ${sql.lit(CHUNK)}), ${sql.lit(now)}
      from message_media m
      cross join lateral generate_series(0, greatest(0, (length(m.bytes) - 1) / ${sql.lit(CHUNK)})) as part(seq)
      where m.media_id is null`.execute(db);
  } else {
    await sql`
      with recursive part(message_id, seq) as (
        select message_id, 0 from message_media where media_id is null
        union all
        select part.message_id, part.seq + 1 from part
        join message_media m on m.message_id = part.message_id
        where (part.seq + 1) * ${sql.lit(CHUNK)} < length(m.bytes)
      )
      insert into media_chunks (media_id, seq, bytes, size, created_at)
      select 'legacy-' || m.message_id, part.seq,
             -- substr of an empty blob is null here, not an empty blob.
             coalesce(substr(m.bytes, part.seq * ${sql.lit(CHUNK)} + 1, ${sql.lit(CHUNK)}), zeroblob(0)),
             min(${sql.lit(CHUNK)}, length(m.bytes) - part.seq * ${sql.lit(CHUNK)}), ${sql.lit(now)}
      from part join message_media m on m.message_id = part.message_id`.execute(db);
  }
  await sql`update message_media set media_id = 'legacy-' || message_id, bytes = ${new Uint8Array(0)}
            where media_id is null`.execute(db);
}
