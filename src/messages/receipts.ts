/**
 * SQL for group members' receipts of outgoing group messages (issue 24, item 2; docs/whatsapp.md, Group receipts).
 *
 * Owns: the `message_receipts` table (009e): recording members' receipts, reading them for the message object,
 * and deleting them with their messages. A member's row is written by upsert on (`message_id`, `phone`), each
 * time set once (`coalesce`): a repeated receipt changes nothing, a read that comes before the delivery sets both,
 * and receipts of one member written at the same time from several transactions end in the same row.
 * Must never: move a message's own status (that is the dispatcher's, through the same change as a direct message's
 * receipt), or record a receipt for a message that is not the receipting device's own outgoing message.
 */
import type { BatchCollector } from '../cluster/fenced-writes.js';
import type { Db } from '../store/schema.js';

/** One member's receipt, as the network reported it. */
export interface MemberReceipt {
  readonly id: string;
  readonly deviceId: number;
  /** The member's number, or the network's own id for it when the number is not known. */
  readonly phone: string;
  readonly status: 'delivered' | 'read';
  readonly at: number;
}

export interface ReceiptRow {
  readonly phone: string;
  readonly delivered_at: number | null;
  readonly read_at: number | null;
}

/** Rows per statement: 4 bound values each, far below either store's limit on values per statement. */
const CHUNK = 500;

/**
 * The receipts of one batch as rows: one per (message, member), the earliest-handed time of each kind kept and
 * a read implying the delivery. PostgreSQL refuses an upsert that touches one row twice in one statement.
 */
function merged(receipts: readonly MemberReceipt[]): Array<ReceiptRow & { message_id: string }> {
  const rows = new Map<
    string,
    { message_id: string; phone: string; delivered_at: number | null; read_at: number | null }
  >();
  for (const receipt of receipts) {
    const key = `${receipt.id}\u0000${receipt.phone}`;
    let row = rows.get(key);
    if (row === undefined) {
      row = { message_id: receipt.id, phone: receipt.phone, delivered_at: null, read_at: null };
      rows.set(key, row);
    }
    row.delivered_at ??= receipt.at;
    if (receipt.status === 'read') row.read_at ??= receipt.at;
  }
  // In one order everywhere, so two transactions upserting the same members never wait on each other in a circle.
  return [...rows.values()].sort((a, b) =>
    a.message_id === b.message_id ? (a.phone < b.phone ? -1 : 1) : a.message_id < b.message_id ? -1 : 1,
  );
}

export const receiptsRepository = {
  /** Records members' receipts; those naming a message that is not the device's own outgoing one are dropped. */
  async record(db: Db, receipts: readonly MemberReceipt[]): Promise<void> {
    if (receipts.length === 0) return;
    const ids = [...new Set(receipts.map((r) => r.id))];
    const owners = new Map<string, number>();
    for (let i = 0; i < ids.length; i += CHUNK) {
      const found = await db
        .selectFrom('messages')
        .select(['id', 'device_id'])
        .where('id', 'in', ids.slice(i, i + CHUNK))
        .where('direction', '=', 'outgoing')
        .execute();
      for (const row of found) owners.set(row.id, Number(row.device_id));
    }
    const rows = merged(receipts.filter((r) => owners.get(r.id) === r.deviceId));
    for (let i = 0; i < rows.length; i += CHUNK) {
      await db
        .insertInto('message_receipts')
        .values(rows.slice(i, i + CHUNK))
        .onConflict((oc) =>
          oc.columns(['message_id', 'phone']).doUpdateSet((eb) => ({
            delivered_at: eb.fn.coalesce('message_receipts.delivered_at', 'excluded.delivered_at'),
            read_at: eb.fn.coalesce('message_receipts.read_at', 'excluded.read_at'),
          })),
        )
        .execute();
    }
  },

  /** Each message's members' receipts, by message id, in the order of the members' numbers. */
  async forMessages(db: Db, ids: readonly string[]): Promise<Map<string, ReceiptRow[]>> {
    const byMessage = new Map<string, ReceiptRow[]>();
    for (let i = 0; i < ids.length; i += CHUNK) {
      const rows = await db
        .selectFrom('message_receipts')
        .select(['message_id', 'phone', 'delivered_at', 'read_at'])
        .where('message_id', 'in', ids.slice(i, i + CHUNK))
        .orderBy('message_id')
        .orderBy('phone')
        .execute();
      for (const { message_id, ...receipt } of rows) {
        const list = byMessage.get(message_id);
        if (list === undefined) byMessage.set(message_id, [receipt]);
        else list.push(receipt);
      }
    }
    return byMessage;
  },

  /** Deletes the receipts of messages that are being deleted (retention). */
  async deleteOf(db: Db, ids: readonly string[]): Promise<void> {
    for (let i = 0; i < ids.length; i += CHUNK) {
      await db
        .deleteFrom('message_receipts')
        .where('message_id', 'in', ids.slice(i, i + CHUNK))
        .execute();
    }
  },
};

/** Members' receipts handed over by the status writes of one group commit, recorded together before it commits. */
export const MEMBER_RECEIPTS: BatchCollector<MemberReceipt> = {
  flush: (trx, receipts) => receiptsRepository.record(trx, receipts),
};
