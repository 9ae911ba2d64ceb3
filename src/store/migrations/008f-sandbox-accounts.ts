/**
 * Sandbox accounts (docs/internals.md, WhatsApp and sandbox accounts): an account created as a sandbox account has
 * its devices on the simulated network even when the gateway runs WhatsApp.
 *
 * - `accounts.sandbox`: 1 for an account created with `--sandbox`, 0 otherwise.
 *   Set at creation and never changed: a device's sessions belong to the network
 *   it paired on, so moving an account between networks would strand them.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('accounts')
    .addColumn('sandbox', 'integer', (col) => col.notNull().defaultTo(0))
    .execute();
}
