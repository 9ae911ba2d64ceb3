/**
 * SQL for the rows of `messages`: inserting them, reading them, the queue of each device, and ending a queue.
 *
 * Beside it, one module per other table the message path writes: status-repository.ts (the outbound state
 * machine's changes of `messages`), media-repository.ts (`message_media`), idempotency-repository.ts
 * (`idempotency_keys`), incoming-ids-repository.ts (`incoming_message_ids` look-ups), quota-repository.ts (the
 * quota counters on `devices`).
 * Must never: decide a rule; that is the service's and the dispatcher's.
 */
import { sql, type Selectable } from 'kysely';
import { chatKey } from '../chats/chat-key.js';
import { BulkInsert } from '../store/bulk-insert.js';
import { onPostgres } from '../store/dialect.js';
import { compiled, prepared } from '../store/prepared.js';
import type { Db, MessagesTable } from '../store/schema.js';
import { messageMediaRepository } from './media-repository.js';
import { quotaRepository } from './quota-repository.js';

export type MessageRow = Selectable<MessagesTable>;
/** A row to insert: columns added by later migrations may be left out (they are then null). */
export type NewMessageRow = Omit<
  MessageRow,
  'seq' | 'quoted' | 'edited_at' | 'deleted_at' | 'claimed_at' | 'chat' | 'source'
> & {
  readonly source?: string | null;
  readonly quoted?: string | null;
  /** Worked out from the row when left out (src/chats/chat-key.ts). */
  readonly chat?: string | null;
  readonly claimed_at?: number | null;
  readonly edited_at?: number | null;
  readonly deleted_at?: number | null;
};

/** Every column of a message row but `seq`, which the store assigns. */
const MESSAGE_COLUMNS = [
  'id',
  'account_id',
  'device_id',
  'direction',
  'type',
  'device_phone',
  'receiver',
  'sender',
  'message',
  'file_url',
  'params',
  'simulate_typing',
  'status',
  'failed_reason',
  'attempts',
  'next_attempt_at',
  'created_at',
  'sent_at',
  'delivered_at',
  'read_at',
  'failed_at',
  'rendered_as',
  'quoted',
  'edited_at',
  'deleted_at',
  'claimed_at',
  'chat',
  'source',
] as const satisfies ReadonlyArray<keyof Omit<MessageRow, 'seq'>>;

// A column added to the table must be added above, or this stops compiling.
type UnlistedColumn = Exclude<keyof Omit<MessageRow, 'seq'>, (typeof MESSAGE_COLUMNS)[number]>;
const everyColumnListed: [UnlistedColumn] extends [never] ? true : never = true;
void everyColumnListed;

/** The row with its `chat` (the chat list and a chat's history read it). */
const withChat = (row: NewMessageRow): NewMessageRow => (row.chat === undefined ? { ...row, chat: chatKey(row) } : row);

const messageInsert = new BulkInsert<'messages', NewMessageRow>('messages', MESSAGE_COLUMNS);

// Statements run once per lane read: built once, then only bound (see store/prepared.ts).

/** Devices asked about in one statement at most. */
const DEVICES_AT_ONCE = 256;

const pendingAfterStatement = prepared(3, (db, deviceId: number, afterSeq: number, limit: number) =>
  db
    .selectFrom('messages')
    .selectAll()
    .where('device_id', '=', deviceId)
    // Written as a literal so the planner can use the partial index on pending messages.
    .where(sql<boolean>`status = 'pending'`)
    .where('seq', '>', afterSeq)
    .orderBy('seq')
    .limit(limit),
);

/**
 * The heads of many devices' queues in one statement (PostgreSQL): for each (device, seq) pair, that device's next
 * pending messages after the seq, at most `limit`, each read through the partial index as the one-device read is.
 */
const pendingAfterManyStatement = prepared(
  3,
  (db, deviceIds: readonly number[], afterSeqs: readonly number[], limit: number) =>
    compiled(
      db,
      sql<MessageRow>`
      select m.* from unnest(${deviceIds}::bigint[], ${afterSeqs}::bigint[]) as w(device_id, after_seq)
      cross join lateral (
        select * from messages
        where device_id = w.device_id and status = 'pending' and seq > w.after_seq
        order by seq limit ${limit}
      ) m
      order by m.device_id, m.seq`,
    ),
);

/** Messages by id, queue rows of actions left out (the targets of message actions, actions.ts). */
const findByIdsPostgres = prepared(1, (db, ids: readonly string[]) =>
  compiled(db, sql<MessageRow>`select * from messages where id = any(${ids}::text[]) and direction <> 'action'`),
);
const findByIdsSqlite = prepared(1, (db, idsJson: string) =>
  compiled(
    db,
    sql<MessageRow>`select * from messages where id in (select value from json_each(${idsJson})) and direction <> 'action'`,
  ),
);

/** What an action's checks read of the message it names (message-lookups.ts). */
export type MessageOwner = Pick<MessageRow, 'id' | 'account_id' | 'device_id' | 'device_phone'>;

// The same read with the four columns the checks need: a row of every column costs several times more to read
// (each value becomes a JavaScript value), and the batch that acts reads the whole row anyway.
const ownersPostgres = prepared(1, (db, ids: readonly string[]) =>
  compiled(
    db,
    sql<MessageOwner>`select id, account_id, device_id, device_phone from messages
      where id = any(${ids}::text[]) and direction <> 'action'`,
  ),
);
const ownersSqlite = prepared(1, (db, idsJson: string) =>
  compiled(
    db,
    sql<MessageOwner>`select id, account_id, device_id, device_phone from messages
      where id in (select value from json_each(${idsJson})) and direction <> 'action'`,
  ),
);

export const messagesRepository = {
  /**
   * Of these devices, those with messages waiting to be sent (a node's poll for work it was not told of, every
   * heartbeat). One probe of the partial index on pending messages per device: a `distinct` over the pending
   * messages read every one of them, 100,000 for a device with a deep queue, at each poll (35 ms on SQLite, 68 ms on
   * PostgreSQL, against well under 1 ms). PostgreSQL turns an `exists` into a scan of them all again; a lateral
   * read of the first one in the index's order is a probe on both planners' terms.
   */
  devicesWithPending: async (db: Db, deviceIds: readonly number[]): Promise<number[]> => {
    const found: number[] = [];
    for (let start = 0; start < deviceIds.length; start += DEVICES_AT_ONCE) {
      const ids = deviceIds.slice(start, start + DEVICES_AT_ONCE);
      const rows = onPostgres(db)
        ? (
            await sql<{ id: number }>`select d.id from devices d cross join lateral (
                select m.seq from messages m where m.device_id = d.id and m.status = 'pending' order by m.seq limit 1
              ) p where d.id = any(${ids}::bigint[])`.execute(db)
          ).rows
        : await db
            .selectFrom('devices')
            .select('id')
            .where('id', 'in', ids)
            .where(({ exists, selectFrom }) =>
              exists(
                selectFrom('messages')
                  .select('messages.id')
                  .whereRef('messages.device_id', '=', 'devices.id')
                  .where(sql<boolean>`status = 'pending'`),
              ),
            )
            .execute();
      for (const row of rows) found.push(Number(row.id));
    }
    return found;
  },

  /** Many messages in few statements, built once (the acceptance path's insert). */
  insertMany: (db: Db, rows: ReadonlyArray<NewMessageRow>): Promise<void> =>
    messageInsert.run(
      db,
      rows.map((row) => withChat(row)),
    ),

  insert: (db: Db, row: NewMessageRow): Promise<MessageRow> =>
    db.insertInto('messages').values(withChat(row)).returningAll().executeTakeFirstOrThrow(),

  find: (db: Db, accountId: number, id: string): Promise<MessageRow | undefined> =>
    db
      .selectFrom('messages')
      .selectAll()
      .where('id', '=', id)
      .where('account_id', '=', accountId)
      // Queued actions (actions.ts) are rows of the queue, not messages.
      .where('direction', '<>', 'action')
      .executeTakeFirst(),

  /**
   * These messages (queue rows of actions excluded) in one statement, by id, whatever their account: one statement
   * text for any number of ids (an array parameter on PostgreSQL, JSON read with `json_each` on SQLite).
   */
  findByIds: async (db: Db, ids: readonly string[]): Promise<Map<string, MessageRow>> => {
    const found = new Map<string, MessageRow>();
    if (ids.length === 0) return found;
    const rows = onPostgres(db) ? await findByIdsPostgres(db, ids) : await findByIdsSqlite(db, JSON.stringify(ids));
    for (const row of rows) found.set(row.id, row);
    return found;
  },

  /** As findByIds, with only the columns that say whose message it is (one prepared statement for any number). */
  ownersOf: async (db: Db, ids: readonly string[]): Promise<Map<string, MessageOwner>> => {
    const found = new Map<string, MessageOwner>();
    if (ids.length === 0) return found;
    const rows = onPostgres(db) ? await ownersPostgres(db, ids) : await ownersSqlite(db, JSON.stringify(ids));
    for (const row of rows) found.set(row.id, row);
    return found;
  },

  list: (
    db: Db,
    accountId: number,
    filter: {
      deviceId?: number;
      status?: string;
      direction?: string;
      read?: boolean;
      beforeSeq?: number;
      limit: number;
    },
  ): Promise<MessageRow[]> => {
    let query = db
      .selectFrom('messages')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('direction', '<>', 'action');
    if (filter.deviceId !== undefined) query = query.where('device_id', '=', filter.deviceId);
    if (filter.status !== undefined) query = query.where('status', '=', filter.status);
    if (filter.direction !== undefined) query = query.where('direction', '=', filter.direction);
    if (filter.read !== undefined) query = query.where('read_at', filter.read ? 'is not' : 'is', null);
    if (filter.beforeSeq !== undefined) query = query.where('seq', '<', filter.beforeSeq);
    return query.orderBy('seq', 'desc').limit(filter.limit).execute();
  },

  /** The next messages a device should send, in acceptance order. */
  pendingAfter: (db: Db, deviceId: number, afterSeq: number, limit: number): Promise<MessageRow[]> =>
    pendingAfterStatement(db, deviceId, afterSeq, limit),

  /**
   * `pendingAfter` for many devices at once, by device (each device at most once in `heads`): one statement on
   * PostgreSQL; on SQLite, which has no LATERAL and no round trips to save, one read per device.
   */
  pendingAfterMany: async (
    db: Db,
    heads: ReadonlyArray<{ readonly deviceId: number; readonly afterSeq: number }>,
    limit: number,
  ): Promise<Map<number, MessageRow[]>> => {
    const byDevice = new Map<number, MessageRow[]>(heads.map((head) => [head.deviceId, []]));
    if (onPostgres(db)) {
      const rows = await pendingAfterManyStatement(
        db,
        heads.map((head) => head.deviceId),
        heads.map((head) => head.afterSeq),
        limit,
      );
      for (const row of rows) byDevice.get(row.device_id)?.push(row);
    } else {
      for (const head of heads)
        byDevice.set(head.deviceId, await pendingAfterStatement(db, head.deviceId, head.afterSeq, limit));
    }
    return byDevice;
  },

  /**
   * pending → failed for up to `limit` of a device's queued messages, oldest
   * first, with their media and their units of quota (none of them reached the
   * network). Answers the failed rows; fewer than `limit` means the queue is empty.
   */
  failQueued: async (db: Db, deviceId: number, reason: string, at: number, limit: number): Promise<MessageRow[]> => {
    const failed = await db
      .updateTable('messages')
      .set({ status: 'failed', failed_at: at, failed_reason: reason })
      .where('id', 'in', (eb) =>
        eb
          .selectFrom('messages')
          .select('id')
          .where('device_id', '=', deviceId)
          .where(sql<boolean>`status = 'pending'`)
          .orderBy('seq')
          .limit(limit),
      )
      .where('status', '=', 'pending')
      .returningAll()
      .execute();
    if (failed.length === 0) return failed;
    await messageMediaRepository.deleteMediaOf(
      db,
      failed.map((row) => row.id),
    );
    // Queued actions (actions.ts) took no quota.
    await quotaRepository.giveBackUnits(db, deviceId, failed.filter((row) => row.direction !== 'action').length);
    return failed;
  },
};
