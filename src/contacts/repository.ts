/**
 * The `contact_profiles` table (013c) and the numbers a device exchanged messages with (docs/api.md, Contacts).
 *
 * Owns: the SQL of the contact cache and of the exchanged-numbers look-up. Must never: decide how long a cached
 * profile is good for (book.ts does), or talk to the network.
 */
import type { Db } from '../store/schema.js';
import type { ContactProfilesTable } from '../store/schema.js';

export type ContactProfileRow = ContactProfilesTable;

export const contactsRepository = {
  find: (db: Db, deviceId: number, phone: string): Promise<ContactProfileRow | undefined> =>
    db
      .selectFrom('contact_profiles')
      .selectAll()
      .where('device_id', '=', deviceId)
      .where('phone', '=', phone)
      .executeTakeFirst(),

  /** Stores what the network showed now, replacing what was cached. */
  save: async (db: Db, row: ContactProfileRow): Promise<void> => {
    const { device_id: _d, phone: _p, ...fields } = row;
    await db
      .insertInto('contact_profiles')
      .values(row)
      .onConflict((oc) => oc.columns(['device_id', 'phone']).doUpdateSet(fields))
      .execute();
  },

  /** The device (un)blocked the number through the gateway: a cached profile shows it at once. */
  setBlocked: async (db: Db, deviceId: number, phone: string, blocked: boolean): Promise<void> => {
    await db
      .updateTable('contact_profiles')
      .set({ blocked: blocked ? 1 : 0 })
      .where('device_id', '=', deviceId)
      .where('phone', '=', phone)
      .execute();
  },

  /** The network said the contact changed: the cached profile is dropped, the next read asks again. */
  forget: async (db: Db, deviceId: number, phone: string): Promise<void> => {
    await db.deleteFrom('contact_profiles').where('device_id', '=', deviceId).where('phone', '=', phone).execute();
  },

  /**
   * The numbers the device exchanged messages with in a chat of their own (not in a group), each once: its user
   * chats, which every message writer keeps in the same transaction (src/chats/maintain.ts), read by the chats'
   * primary key instead of scanning the device's messages.
   */
  exchanged: async (db: Db, deviceId: number): Promise<string[]> => {
    const rows = await db
      .selectFrom('chats')
      .select('chat')
      .where('device_id', '=', deviceId)
      .where('type', '=', 'user')
      .execute();
    return rows.map((row) => row.chat);
  },
};
