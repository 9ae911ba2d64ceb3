/**
 * Group receipts per member (issue 24, item 2; docs/whatsapp.md, Group receipts).
 *
 * - `message_receipts`: for an outgoing group message, one row per member whose
 *   phone receipted it: `phone` (the member's number, or the network's own id
 *   for the member when its number is not known), `delivered_at` and `read_at`
 *   (milliseconds, each set once; a read sets `delivered_at` too when it came
 *   first). The key (`message_id`, `phone`) makes a repeated receipt an update
 *   of the same row. Deleted with the message by retention.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('message_receipts')
    .addColumn('message_id', 'text', (col) => col.notNull())
    .addColumn('phone', 'text', (col) => col.notNull())
    .addColumn('delivered_at', 'bigint')
    .addColumn('read_at', 'bigint')
    .addPrimaryKeyConstraint('message_receipts_pk', ['message_id', 'phone'])
    .execute();
}
