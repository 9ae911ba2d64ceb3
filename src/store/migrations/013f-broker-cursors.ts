/**
 * Broker cursors (DECISIONS 17; docs/brokers.md): how far into the event log each broker publisher has
 * published, and which process drives it.
 *
 * - `broker_cursors.destination`: `amqp` or `nats`, one row each, made by the first publisher that starts.
 * - `cursor`: the log cursor of the last event the broker confirmed; null: nothing published yet (the log's start).
 * - `holder` and `lease_until`: the one process of a cluster that publishes to this broker, until when (epoch ms);
 *   another takes over once the lease has run out. Every move of the cursor is made under the holder's name, so a
 *   process that lost the lease never moves it.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('broker_cursors')
    .addColumn('destination', 'text', (col) => col.primaryKey())
    .addColumn('cursor', 'text')
    .addColumn('holder', 'text')
    .addColumn('lease_until', 'bigint', (col) => col.notNull().defaultTo(0))
    .addColumn('updated_at', 'bigint', (col) => col.notNull())
    .execute();
}
