/**
 * Media streamed into the store (issue 10, item 18): a media download is
 * written in chunks as it arrives, so the gateway never holds a whole file
 * in memory to accept it.
 *
 * - `media_chunks`: the bytes of one download (`media_id`), in order (`seq`),
 *   at most a MiB each. Written before the message is accepted; a download
 *   that ends in no message (refused format, quota, a crash) leaves chunks no
 *   `message_media` row names, which are swept.
 * - `message_media.media_id`: the chunks holding the message's media (the old
 *   `bytes` column stays empty for such rows). Both go once the message is
 *   `sent` or `failed` (docs/internals.md, Retention).
 */
import type { Kysely } from 'kysely';
import type { MigrationDialect } from './helpers.js';

export async function up(db: Kysely<unknown>, dialect: MigrationDialect): Promise<void> {
  await db.schema
    .createTable('media_chunks')
    .addColumn('media_id', 'text', (col) => col.notNull())
    .addColumn('seq', 'integer', (col) => col.notNull())
    .addColumn('bytes', dialect.blobType, (col) => col.notNull())
    .addColumn('created_at', 'bigint', (col) => col.notNull())
    .addPrimaryKeyConstraint('media_chunks_pk', ['media_id', 'seq'])
    .execute();
  await db.schema.createIndex('media_chunks_created').on('media_chunks').column('created_at').execute();
  await db.schema.alterTable('message_media').addColumn('media_id', 'text').execute();
  await db.schema.createIndex('message_media_media').on('message_media').column('media_id').execute();
}
