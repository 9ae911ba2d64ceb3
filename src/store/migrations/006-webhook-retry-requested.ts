/**
 * `webhook_events.retry_requested`: a manual retry asked for while an attempt
 * of the same delivery is in flight. The attempt's outcome (delivered, failed
 * or a scheduled retry) would otherwise overwrite the request; with the flag
 * set, the outcome is logged and the delivery goes back to `pending`, due at
 * once. A claim clears it: the attempt it starts is the one asked for.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('webhook_events')
    .addColumn('retry_requested', 'integer', (col) => col.notNull().defaultTo(0))
    .execute();
}
