/**
 * History sync at pairing (issue 27; DECISIONS 16; docs/api.md, History sync).
 *
 * - `messages.source`: where a message came from. Null for every message the gateway sent or received live
 *   (every row before this migration); `history` for one the network offered from the phone's history when the
 *   device was paired (src/messages/history.ts).
 * - `devices.history_synced_at`: when the device's history sync of its current pairing was announced
 *   (`device.history_synced`); null until then, and again after each pairing, so one pairing announces it once.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('messages').addColumn('source', 'text').execute();
  await db.schema.alterTable('devices').addColumn('history_synced_at', 'bigint').execute();
}
