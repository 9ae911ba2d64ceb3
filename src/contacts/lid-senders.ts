/**
 * The `lid_senders` table (009f; docs/whatsapp.md, Senders known by LID): per device, the LIDs whose messages were
 * delivered under the LID, and the number reported for each once the network made it known.
 *
 * Owns: the SQL of that table. Must never: decide when a report is due (events/lid-reports.ts does), or hold the
 * network's mappings themselves (the library's session state does).
 */
import type { Db } from '../store/schema.js';

export const lidSendersRepository = {
  /** The LID delivered a message with no number known; a LID noted (or resolved) before is left as it is. */
  noteUnresolved: async (db: Db, deviceId: number, lid: string, now: number): Promise<void> => {
    await db
      .insertInto('lid_senders')
      .values({ device_id: deviceId, lid, phone: null, first_seen_at: now, resolved_at: null })
      .onConflict((oc) => oc.columns(['device_id', 'lid']).doNothing())
      .execute();
  },

  /** Records the number behind a LID noted unresolved; false when the LID was never noted, or resolved before. */
  resolve: async (db: Db, deviceId: number, lid: string, phone: string, now: number): Promise<boolean> => {
    const result = await db
      .updateTable('lid_senders')
      .set({ phone, resolved_at: now })
      .where('device_id', '=', deviceId)
      .where('lid', '=', lid)
      .where('resolved_at', 'is', null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  },
};
