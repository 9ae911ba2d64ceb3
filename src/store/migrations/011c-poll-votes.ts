/**
 * Votes on polls (issue 26; docs/webhooks.md, Poll votes).
 *
 * - `poll_votes`: one row per (poll message, voter) with the option texts the voter chose (a JSON array, in the
 *   poll's order; empty when the vote was withdrawn). A later vote of the same voter replaces the row (the key
 *   makes it an upsert). `voted_at` is when the gateway recorded it (milliseconds), which orders a tally's voters.
 *   Deleted with the poll by retention.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('poll_votes')
    .addColumn('message_id', 'text', (col) => col.notNull())
    .addColumn('voter', 'text', (col) => col.notNull())
    .addColumn('selected', 'text', (col) => col.notNull())
    .addColumn('voted_at', 'bigint', (col) => col.notNull())
    .addPrimaryKeyConstraint('poll_votes_pk', ['message_id', 'voter'])
    .execute();
}
