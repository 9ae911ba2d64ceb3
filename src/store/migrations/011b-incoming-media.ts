/**
 * Incoming media kept in the store (issue 26; DECISIONS 15, Incoming media; docs/media-storage.md).
 *
 * - `incoming_media`: one row per incoming message with media (`message_id`, unique), under its own `media_id`
 *   (the id in `/media/{media_id}` and the `media_chunks` holding the bytes once `stored`). `status`: `pending`
 *   while the download is to be tried (at `next_attempt_at`, `attempts` made so far), then `stored`, `too_large`,
 *   `failed` or (after retention) `expired`. `network_ref`: the network's own reference to the media, opaque to the
 *   gateway (emptied once the download ended). `size`/`sha256` (hex) as the network announced them, then as stored.
 * - `gateway_secrets`: secrets the gateway makes itself and every node shares (`media_urls`: the HMAC key of signed
 *   media URLs), made once by whichever node starts first.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('incoming_media')
    .addColumn('media_id', 'text', (col) => col.primaryKey())
    .addColumn('message_id', 'text', (col) => col.notNull().unique())
    .addColumn('account_id', 'integer', (col) => col.notNull())
    .addColumn('device_id', 'integer', (col) => col.notNull())
    .addColumn('status', 'text', (col) => col.notNull())
    .addColumn('mimetype', 'text', (col) => col.notNull())
    .addColumn('size', 'bigint')
    .addColumn('file_name', 'text')
    .addColumn('sha256', 'text')
    .addColumn('attempts', 'integer', (col) => col.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'bigint', (col) => col.notNull())
    .addColumn('network_ref', 'text')
    .addColumn('created_at', 'bigint', (col) => col.notNull())
    .addColumn('stored_at', 'bigint')
    .execute();
  await db.schema
    .createIndex('incoming_media_due')
    .on('incoming_media')
    .columns(['status', 'next_attempt_at'])
    .execute();
  await db.schema.createIndex('incoming_media_stored').on('incoming_media').columns(['status', 'stored_at']).execute();
  await db.schema
    .createTable('gateway_secrets')
    .addColumn('name', 'text', (col) => col.primaryKey())
    .addColumn('secret', 'text', (col) => col.notNull())
    .addColumn('created_at', 'bigint', (col) => col.notNull())
    .execute();
}
