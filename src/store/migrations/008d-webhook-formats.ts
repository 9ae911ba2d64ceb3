/**
 * Webhook formats and reply by response (docs/internals.md, Whatspie compatibility, issue 11).
 *
 * - `devices.webhook_format`: how the device's deliveries are rendered at
 *   delivery time: `standard` (the default), `whatspie_v1` or `whatspie_v2`.
 * - `devices.webhook_reply`: 1 when a `standard` device's receiver may answer
 *   a `message.incoming` delivery with replies to send (the `whatspie_*`
 *   formats always may).
 * - `webhook_attempts.format`: the format an attempt was sent in (null for
 *   attempts from before this migration: `standard`).
 * - `webhook_attempts.reply`: what the receiver's answer asked to send and
 *   what came of it (JSON), for attempts that could reply; null otherwise.
 *
 * - Deliveries a format has no body for end `skipped`; retention finds them
 *   by `created_at` through a partial index holding only those.
 *
 * Existing rows keep today's behaviour: `standard`, no replies.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('devices')
    .addColumn('webhook_format', 'text', (col) => col.notNull().defaultTo('standard'))
    .execute();
  await db.schema
    .alterTable('devices')
    .addColumn('webhook_reply', 'integer', (col) => col.notNull().defaultTo(0))
    .execute();
  await db.schema.alterTable('webhook_attempts').addColumn('format', 'text').execute();
  await db.schema.alterTable('webhook_attempts').addColumn('reply', 'text').execute();
  await db.schema
    .createIndex('webhook_events_skipped')
    .on('webhook_events')
    .column('created_at')
    .where(sql.ref('status'), '=', sql.lit('skipped'))
    .execute();
}
