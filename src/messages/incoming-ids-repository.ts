/**
 * SQL for `incoming_message_ids`: the network's id of each incoming message, by the gateway's id of it (a reply
 * quotes a message by either).
 *
 * Owns: the look-ups through that table (its rows are written with the incoming message, by src/events/repository.ts),
 * and finding the message a network event names (ours by our id, a received one through that table).
 * Must never: decide what a reply quotes (quotes.ts does).
 */
import type { Db } from '../store/schema.js';
import type { MessageRow } from './repository.js';

export const incomingIdsRepository = {
  /** The network id of an incoming message of the device, by the gateway's id of it. */
  incomingNetworkId: async (db: Db, deviceId: number, messageId: string): Promise<string | undefined> => {
    const row = await db
      .selectFrom('incoming_message_ids')
      .select('network_id')
      .where('message_id', '=', messageId)
      .where('device_id', '=', deviceId)
      .executeTakeFirst();
    return row?.network_id;
  },

  /**
   * The network ids of these incoming messages in one statement, keyed by `networkIdKey(device, message)` (a message
   * counts only for the device that received it, as in incomingNetworkId).
   */
  incomingNetworkIds: async (db: Db, messageIds: readonly string[]): Promise<Map<string, string>> => {
    const found = new Map<string, string>();
    if (messageIds.length === 0) return found;
    const rows = await db
      .selectFrom('incoming_message_ids')
      .select(['message_id', 'device_id', 'network_id'])
      .where('message_id', 'in', messageIds)
      .execute();
    for (const row of rows) {
      const key = networkIdKey(row.device_id, row.message_id);
      if (!found.has(key)) found.set(key, row.network_id);
    }
    return found;
  },

  /** An incoming message of the device, by the network's id of it. */
  findIncomingByNetworkId: (db: Db, deviceId: number, networkId: string): Promise<MessageRow | undefined> =>
    db
      .selectFrom('incoming_message_ids')
      .innerJoin('messages', 'messages.id', 'incoming_message_ids.message_id')
      .selectAll('messages')
      .where('incoming_message_ids.device_id', '=', deviceId)
      .where('incoming_message_ids.network_id', '=', networkId)
      .executeTakeFirst(),

  /**
   * The message of the device a network event names (a reaction, an edit, a vote): one it sent, by the gateway's
   * id (the network carries ours); one it received, by the network's id.
   */
  findTarget: (
    db: Db,
    deviceId: number,
    target: { readonly id: string; readonly fromMe: boolean },
  ): Promise<MessageRow | undefined> => {
    if (!target.fromMe) return incomingIdsRepository.findIncomingByNetworkId(db, deviceId, target.id);
    return db
      .selectFrom('messages')
      .selectAll()
      .where('id', '=', target.id)
      .where('device_id', '=', deviceId)
      .where('direction', '=', 'outgoing')
      .executeTakeFirst();
  },
};

/** The key of incomingNetworkIds' answer. */
export const networkIdKey = (deviceId: number, messageId: string): string => `${deviceId}\u0000${messageId}`;
