/**
 * Incoming calls (DECISIONS 16; docs/devices.md, Calls).
 *
 * - `devices.reject_calls`: 1 when the device rejects every incoming call on the network, 0 (the default) when it
 *   only announces them (`call.incoming`).
 * - `devices.reject_calls_message`: a text sent to the caller after a rejection; null for none.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('devices')
    .addColumn('reject_calls', 'integer', (col) => col.notNull().defaultTo(0))
    .execute();
  await db.schema.alterTable('devices').addColumn('reject_calls_message', 'text').execute();
}
