/**
 * Storing the history a phone offers its device at pairing (DECISIONS 16; docs/api.md, History sync).
 *
 * Owns: `storeHistory`, the one writer of history messages: a batch of the seam's history messages becomes message
 * rows with `source: "history"`, in the caller's transaction. Only messages sent within the last
 * `GATEWAY_HISTORY_DAYS` days are kept (`withinHistory`: the boundary is in). Each is stored once: a message the
 * device already has is skipped, by the same incoming ids table live incoming messages claim (a history copy of a
 * message received live, or a live copy received later, is never stored twice), and one the device sent by its own
 * id. Row shape: a received one is `incoming`, `delivered` when it was sent (`delivered_at`), from `sender` to the
 * device's number, a group's among its params as `group_id` (events/incoming.ts); one the phone sent is `outgoing`
 * and `sent` (`sent_at`), to the chat; `timestamp` is when it was sent. Media is described by its params only: no
 * download is recorded (`file_url` null, no `media` object). A received one counts as read when synced (`read_at`):
 * a chat's unread count is what arrived live. The chat list is kept in the same transaction (chats/maintain.ts).
 * Must never: record an event (no `message.incoming`, no status events), count against a quota, or reach the
 * dispatcher (no history row is `pending`).
 */
import type { Transaction } from 'kysely';
import { touchChats } from '../chats/maintain.js';
import { incomingFields } from '../events/incoming-fields.js';
import { newUlid } from '../ids.js';
import { withinHistory, type HistoryMessage } from '../network/network.js';
import type { Database } from '../store/schema.js';
import { messagesRepository, type NewMessageRow } from './repository.js';

/** The device a history batch is stored for. */
export interface HistoryDevice {
  readonly id: number;
  readonly account_id: number;
  readonly phone: string;
}

/** What one batch stored: how many messages, and the chats they are in. */
export interface StoredHistory {
  readonly messages: number;
  readonly chats: ReadonlySet<string>;
}

/** Ids claimed in one statement at most (4 parameters each, within SQLite's limit). */
const CLAIM_AT_ONCE = 200;

/**
 * Stores the messages of `batch` sent within the last `days` days at `now`, each once; answers what it stored.
 * `days` 0 stores none.
 */
export async function storeHistory(
  trx: Transaction<Database>,
  device: HistoryDevice,
  batch: ReadonlyArray<HistoryMessage>,
  days: number,
  now: number,
): Promise<StoredHistory> {
  const kept = new Map<string, HistoryMessage>();
  for (const message of batch) {
    if (withinHistory(message.at.getTime(), days, now) && !kept.has(message.id)) kept.set(message.id, message);
  }
  const fresh = await claim(trx, device.id, kept, now);
  const rows: NewMessageRow[] = [];
  const chats = new Set<string>();
  for (const message of kept.values()) {
    const id = fresh.get(message.id);
    if (id === undefined) continue;
    rows.push(historyRow(device, message, id, now));
    chats.add(message.chat);
  }
  await messagesRepository.insertMany(trx, rows);
  // The chat list gets them in the same transaction (src/chats/maintain.ts): a chat's last message may be one of them.
  await touchChats(trx, rows, now);
  return { messages: rows.length, chats };
}

/**
 * Claims the network ids of `kept` for the device: answers the ones that were free, each with the id its row
 * gets. One the device sent itself under that id (an outgoing message of its own) is not free either.
 */
async function claim(
  trx: Transaction<Database>,
  deviceId: number,
  kept: ReadonlyMap<string, HistoryMessage>,
  now: number,
): Promise<Map<string, string>> {
  const fresh = new Map<string, string>();
  const all = [...kept.keys()];
  for (let start = 0; start < all.length; start += CLAIM_AT_ONCE) {
    const ids = all.slice(start, start + CLAIM_AT_ONCE);
    const own = await trx
      .selectFrom('messages')
      .select('id')
      .where('device_id', '=', deviceId)
      .where('id', 'in', ids)
      .execute();
    const sent = new Set(own.map((row) => row.id));
    const values = ids
      .filter((networkId) => !sent.has(networkId))
      .map((networkId) => ({ device_id: deviceId, network_id: networkId, message_id: newUlid(now), created_at: now }));
    if (values.length === 0) continue;
    const claimed = await trx
      .insertInto('incoming_message_ids')
      .values(values)
      .onConflict((oc) => oc.columns(['device_id', 'network_id']).doNothing())
      .returning(['network_id', 'message_id'])
      .execute();
    for (const row of claimed) fresh.set(row.network_id, row.message_id);
  }
  return fresh;
}

function historyRow(device: HistoryDevice, message: HistoryMessage, id: string, now: number): NewMessageRow {
  const at = message.at.getTime();
  const fields = incomingFields(message.content);
  const group = message.chat.endsWith('@g.us') ? message.chat : undefined;
  const incoming = !message.fromMe;
  const params =
    incoming && (group !== undefined || message.fromLid !== undefined)
      ? JSON.stringify({
          ...(JSON.parse(fields.params) as Record<string, unknown>),
          ...(group === undefined ? {} : { group_id: group }),
          ...(message.fromLid === undefined ? {} : { from_lid: message.fromLid }),
        })
      : fields.params;
  return {
    id,
    account_id: device.account_id,
    device_id: device.id,
    direction: incoming ? 'incoming' : 'outgoing',
    ...fields,
    params,
    device_phone: device.phone,
    receiver: incoming ? device.phone : message.chat,
    sender: incoming ? (message.from ?? message.chat) : null,
    file_url: null,
    simulate_typing: 0,
    status: incoming ? 'delivered' : 'sent',
    failed_reason: null,
    attempts: 0,
    next_attempt_at: now,
    created_at: at,
    sent_at: at,
    delivered_at: incoming ? at : null,
    // Received before the gateway was linked, on a phone that showed them: read when synced, so a chat's unread
    // count is what arrived since (docs/api.md, History sync).
    read_at: incoming ? now : null,
    failed_at: null,
    rendered_as: null,
    source: 'history',
  };
}
