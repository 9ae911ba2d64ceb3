/**
 * Message actions (issue 26; docs/internals.md, Message actions).
 *
 * - `messages.claimed_at` (milliseconds): set by the dispatcher in the statement that takes a `pending` message for
 *   a send attempt, cleared when the attempt is to be retried. A cancel (`DELETE /messages/{id}`) ends a message only
 *   while it is `pending` and not claimed, in one statement, so a message can never be both sent and cancelled.
 * - Actions themselves (reaction, edit, delete for everyone, read) are rows of `messages` with `direction = 'action'`,
 *   queued in the device's order with its messages; they need no column of their own.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('messages').addColumn('claimed_at', 'bigint').execute();
}
