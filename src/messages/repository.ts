/**
 * SQL for messages, their media and idempotency keys.
 *
 * Owns: the `messages`, `message_media` (which stored media is a message's;
 * the bytes are src/media/'s) and `idempotency_keys` tables, and the quota
 * counter's atomic take and give-back on `devices`.
 * Must never: decide a rule; that is the service's and the dispatcher's.
 */
import { sql, type ExpressionBuilder, type Selectable, type UpdateQueryBuilder, type UpdateResult } from 'kysely';
import { deleteMedia } from '../media/index.js';
import { BulkInsert } from '../store/bulk-insert.js';
import { onPostgres } from '../store/dialect.js';
import { compiled, prepared, type PreparedStatement } from '../store/prepared.js';
import type { Database, Db, MessagesTable } from '../store/schema.js';

export type MessageRow = Selectable<MessagesTable>;
/** A row to insert: columns added by later migrations may be left out (they are then null). */
export type NewMessageRow = Omit<MessageRow, 'seq' | 'quoted'> & { readonly quoted?: string | null };

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
] as const satisfies ReadonlyArray<keyof Omit<MessageRow, 'seq'>>;

// A column added to the table must be added above, or this stops compiling.
type UnlistedColumn = Exclude<keyof Omit<MessageRow, 'seq'>, (typeof MESSAGE_COLUMNS)[number]>;
const everyColumnListed: [UnlistedColumn] extends [never] ? true : never = true;
void everyColumnListed;

const messageInsert = new BulkInsert<'messages', NewMessageRow>('messages', MESSAGE_COLUMNS);

// Statements run once per message, receipt or acceptance batch: built once, then only bound (see store/prepared.ts).

const MAX_LOCKED_AT_ONCE = 256;
const lockQuotasStatements = new Map<
  number,
  PreparedStatement<number[], { id: number; quota_limit: number; quote_used: number }>
>();

const takeQuotaStatement = prepared(1, (db, deviceId: number) =>
  db
    .updateTable('devices')
    .set((eb) => ({ quote_used: eb('quote_used', '+', 1) }))
    .where('id', '=', deviceId)
    .where((eb) => eb.or([eb('quota_limit', '<', 0), eb('quote_used', '<', eb.ref('quota_limit'))]))
    .returning('id'),
);

/** Per padded size: the quota used by many devices, each by its own count, in one statement. */
const addQuotaUsedStatements = new Map<number, PreparedStatement<number[], UpdateResult>>();

function addQuotaUsedStatement(size: number): PreparedStatement<number[], UpdateResult> {
  let statement = addQuotaUsedStatements.get(size);
  if (statement === undefined) {
    // Arguments: the ids, then each id's count, in the same order.
    statement = prepared(2 * size, (db, ...args: number[]) => {
      const ids = args.slice(0, size);
      const units = args.slice(size);
      return db
        .updateTable('devices')
        .set((eb) => {
          let cases = eb
            .case('id')
            .when(ids[0]!)
            .then(eb.cast<number>(eb.val(units[0]!), 'integer'));
          for (let i = 1; i < size; i++)
            cases = cases.when(ids[i]!).then(eb.cast<number>(eb.val(units[i]!), 'integer'));
          return { quote_used: eb('quote_used', '+', cases.end()) };
        })
        .where('id', 'in', ids);
    });
    addQuotaUsedStatements.set(size, statement);
  }
  return statement;
}

const giveBackQuotaStatement = prepared(1, (db, deviceId: number) =>
  db
    .updateTable('devices')
    .set((eb) => ({ quote_used: eb('quote_used', '-', 1) }))
    .where('id', '=', deviceId)
    .where('quote_used', '>', 0),
);

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

/**
 * A status change, prepared twice: reading the changed row back (to announce
 * it in a webhook event) or only its id (whether it moved). Reading all 22
 * columns back made a status write three times as costly in SQLite, and
 * most devices have no webhook to announce it to.
 */
function statusChange<A extends readonly unknown[]>(
  arity: A['length'],
  build: (db: Db, ...args: A) => UpdateQueryBuilder<Database, 'messages', 'messages', UpdateResult>,
) {
  return {
    row: prepared(arity, (db, ...args: A) => build(db, ...args).returningAll()),
    moved: prepared(arity, (db, ...args: A) => build(db, ...args).returning('id')),
  };
}

const markSentChange = statusChange(3, (db, id: string, at: number, renderedAs: string | null) =>
  db
    .updateTable('messages')
    .set({ status: 'sent', sent_at: at, rendered_as: renderedAs })
    .where('id', '=', id)
    .where('status', '=', 'pending'),
);

const markFailedStatement = prepared(3, (db, id: string, at: number, reason: string) =>
  db
    .updateTable('messages')
    .set({ status: 'failed', failed_at: at, failed_reason: reason })
    .where('id', '=', id)
    .where('status', '=', 'pending')
    .returningAll(),
);

/** The network refused a message it had taken: sent (or still pending here) → failed. Never undoes a delivery. */
const markRefusedStatement = prepared(4, (db, id: string, deviceId: number, at: number, reason: string) =>
  db
    .updateTable('messages')
    .set({ status: 'failed', failed_at: at, failed_reason: reason })
    .where('id', '=', id)
    .where('device_id', '=', deviceId)
    .where('status', 'in', ['pending', 'sent'])
    .returningAll(),
);

/**
 * Rows a network receipt may move: those in `from`, and a message given up as failed that never reached `sent` (its
 * ack came too late, docs/whatsapp.md, Acknowledgements). A message the network refused after `sent` stays failed.
 */
function revivable(from: ReadonlyArray<'pending' | 'sent' | 'delivered'>) {
  return (eb: ExpressionBuilder<Database, 'messages'>) =>
    eb.or([eb('status', 'in', from), eb.and([eb('status', '=', 'failed'), eb('sent_at', 'is', null)])]);
}

/**
 * The network acknowledged a send after its wait had run out (docs/whatsapp.md, Acknowledgements): pending (a retry
 * queued) or failed (retries given up) → sent. The network's word that it took the message wins over the guess.
 */
const markAckedLateChange = statusChange(3, (db, id: string, deviceId: number, at: number) =>
  db
    .updateTable('messages')
    .set({ status: 'sent', sent_at: at, failed_at: null, failed_reason: null })
    .where('id', '=', id)
    .where('device_id', '=', deviceId)
    .where(revivable(['pending'])),
);

/** A delivery receipt; also for a message given up as failed, which the phone has after all. */
const markDeliveredChange = statusChange(3, (db, id: string, deviceId: number, at: number) =>
  db
    .updateTable('messages')
    .set((eb) => ({
      status: 'delivered',
      delivered_at: at,
      sent_at: eb.fn.coalesce('sent_at', eb.val(at)),
      failed_at: null,
      failed_reason: null,
    }))
    .where('id', '=', id)
    .where('device_id', '=', deviceId)
    .where(revivable(['pending', 'sent'])),
);

const markReadChange = statusChange(3, (db, id: string, deviceId: number, at: number) =>
  db
    .updateTable('messages')
    .set((eb) => ({
      status: 'delivered',
      read_at: at,
      delivered_at: eb.fn.coalesce('delivered_at', eb.val(at)),
      sent_at: eb.fn.coalesce('sent_at', eb.val(at)),
      failed_at: null,
      failed_reason: null,
    }))
    .where('id', '=', id)
    .where('device_id', '=', deviceId)
    .where('read_at', 'is', null)
    .where(revivable(['pending', 'sent', 'delivered'])),
);

/** What a status change answers: the changed row (or undefined) when read back, else whether it changed. */
export type StatusChanged<R extends boolean> = R extends true ? MessageRow | undefined : boolean;

function outcome<R extends boolean>(changed: readonly unknown[], readBack: R): StatusChanged<R> {
  return (readBack ? changed[0] : changed.length > 0) as StatusChanged<R>;
}

/** A receipt's status change for one device's message; `readBack` as for markSent. */
function receipt(change: ReturnType<typeof statusChange<readonly [id: string, deviceId: number, at: number]>>) {
  return async <R extends boolean>(
    db: Db,
    deviceId: number,
    id: string,
    at: number,
    readBack: R,
  ): Promise<StatusChanged<R>> => outcome(await (readBack ? change.row : change.moved)(db, id, deviceId, at), readBack);
}

/**
 * Many status changes of one kind in one statement (a CASE on the id per changed column),
 * prepared per padded size like the quota statements: `sent` for messages without media,
 * and receipts. Used by the dispatcher for devices with no webhook, whose changes need not be
 * read back. Padding repeats the first change (the first matching case wins; a row changes once).
 */
type ManyChange = {
  readonly id: string;
  readonly deviceId: number;
  readonly at: number;
  readonly renderedAs?: string | null;
};
type ManyKind = 'sent' | 'delivered' | 'read';
const manyStatements = new Map<string, PreparedStatement<unknown[], UpdateResult>>();

function manyStatement(kind: ManyKind, size: number): PreparedStatement<unknown[], UpdateResult> {
  const key = `${kind}:${size}`;
  let statement = manyStatements.get(key);
  if (statement !== undefined) return statement;
  // Arguments: ids, then device ids, then times, then (sent only) rendered_as, each `size` long.
  const arity = (kind === 'sent' ? 4 : 3) * size;
  statement = prepared(arity, (db, ...args: unknown[]) => {
    const ids = args.slice(0, size) as string[];
    const devices = args.slice(size, 2 * size) as number[];
    const times = args.slice(2 * size, 3 * size) as number[];
    const rendered = args.slice(3 * size, 4 * size) as Array<string | null>;
    const byId = <T>(eb: ExpressionBuilder<Database, 'messages'>, values: readonly T[], type: 'bigint' | 'text') => {
      let cases = eb
        .case('id')
        .when(ids[0]!)
        .then(eb.cast<T>(eb.val(values[0]!), type));
      for (let i = 1; i < size; i++) cases = cases.when(ids[i]!).then(eb.cast<T>(eb.val(values[i]!), type));
      return cases.end();
    };
    const base = db.updateTable('messages').where('id', 'in', ids);
    if (kind === 'sent') {
      return base
        .set((eb) => ({
          status: 'sent',
          sent_at: byId(eb, times, 'bigint'),
          rendered_as: byId(eb, rendered, 'text'),
        }))
        .where((eb) => eb('device_id', '=', byId(eb, devices, 'bigint')))
        .where('status', '=', 'pending');
    }
    if (kind === 'delivered') {
      return base
        .set((eb) => ({
          status: 'delivered',
          delivered_at: byId(eb, times, 'bigint'),
          sent_at: eb.fn.coalesce('sent_at', byId(eb, times, 'bigint')),
          failed_at: null,
          failed_reason: null,
        }))
        .where((eb) => eb('device_id', '=', byId(eb, devices, 'bigint')))
        .where(revivable(['pending', 'sent']));
    }
    return base
      .set((eb) => ({
        status: 'delivered',
        read_at: byId(eb, times, 'bigint'),
        delivered_at: eb.fn.coalesce('delivered_at', byId(eb, times, 'bigint')),
        sent_at: eb.fn.coalesce('sent_at', byId(eb, times, 'bigint')),
        failed_at: null,
        failed_reason: null,
      }))
      .where((eb) => eb('device_id', '=', byId(eb, devices, 'bigint')))
      .where('read_at', 'is', null)
      .where(revivable(['pending', 'sent', 'delivered']));
  });
  manyStatements.set(key, statement);
  return statement;
}

export const messagesRepository = {
  /** Of these devices, those with messages waiting to be sent (a node's poll for work it was not told of). */
  devicesWithPending: async (db: Db, deviceIds: readonly number[]): Promise<number[]> => {
    const found: number[] = [];
    for (let start = 0; start < deviceIds.length; start += MAX_LOCKED_AT_ONCE) {
      const ids = deviceIds.slice(start, start + MAX_LOCKED_AT_ONCE);
      const rows = await db
        .selectFrom('messages')
        .select('device_id')
        .distinct()
        .where(sql<boolean>`status = 'pending'`)
        .where('device_id', 'in', ids)
        .execute();
      for (const row of rows) found.push(Number(row.device_id));
    }
    return found;
  },

  /** Takes one unit of quota if any is left; false when none is. Exact under concurrency (one atomic UPDATE). */
  takeQuota: async (db: Db, deviceId: number): Promise<boolean> =>
    (await takeQuotaStatement(db, deviceId)).length === 1,

  /**
   * Locks the devices' rows for the rest of the transaction and reads their
   * quota (a no-op UPDATE: a row lock on PostgreSQL; SQLite's write transaction
   * already excludes others), so a whole batch can be allotted exactly.
   */
  lockQuotas: async (db: Db, deviceIds: readonly number[]) => {
    const rows = [];
    for (let start = 0; start < deviceIds.length; start += MAX_LOCKED_AT_ONCE) {
      const ids = deviceIds.slice(start, start + MAX_LOCKED_AT_ONCE);
      // Padded to a power of two (repeating an id changes nothing), so few statement shapes are kept.
      let size = 1;
      while (size < ids.length) size *= 2;
      while (ids.length < size) ids.push(ids[0]!);
      let statement = lockQuotasStatements.get(size);
      if (statement === undefined) {
        statement = prepared(size, (db, ...ids: number[]) =>
          db
            .updateTable('devices')
            .set((eb) => ({ quote_used: eb.ref('quote_used') }))
            .where('id', 'in', ids)
            .returning(['id', 'quota_limit', 'quote_used']),
        );
        lockQuotasStatements.set(size, statement);
      }
      rows.push(...(await statement(db, ...ids)));
    }
    return rows;
  },

  /**
   * Adds each device's count to its quota used: one statement per 256 devices (a batch of
   * acceptances spread over many devices used to cost one statement per device).
   */
  addQuotaUsed: async (db: Db, units: ReadonlyMap<number, number>): Promise<void> => {
    const entries = [...units];
    for (let start = 0; start < entries.length; start += MAX_LOCKED_AT_ONCE) {
      const part = entries.slice(start, start + MAX_LOCKED_AT_ONCE);
      // Padded to a power of two with the first pair again (the first matching case wins; its row is updated once).
      let size = 1;
      while (size < part.length) size *= 2;
      while (part.length < size) part.push(part[0]!);
      await addQuotaUsedStatement(size)(db, ...part.map(([id]) => id), ...part.map(([, n]) => n));
    }
  },

  /** Many messages in few statements, built once (the acceptance path's insert). */
  insertMany: (db: Db, rows: ReadonlyArray<NewMessageRow>): Promise<void> => messageInsert.run(db, rows),

  giveBackQuota: async (db: Db, deviceId: number): Promise<void> => {
    await giveBackQuotaStatement(db, deviceId);
  },

  insert: (db: Db, row: NewMessageRow): Promise<MessageRow> =>
    db.insertInto('messages').values(row).returningAll().executeTakeFirstOrThrow(),

  /** The message's media: streamed chunks (`mediaId`), written before acceptance. */
  insertMedia: async (db: Db, messageId: string, mimetype: string, mediaId: string): Promise<void> => {
    await db
      .insertInto('message_media')
      .values({ message_id: messageId, mimetype, bytes: new Uint8Array(0), media_id: mediaId })
      .execute();
  },

  /** Which stored media is the message's (src/media/), and its type; undefined once it was deleted. */
  mediaOf: async (db: Db, messageId: string): Promise<{ mimetype: string; mediaId: string } | undefined> => {
    const row = await db
      .selectFrom('message_media')
      .select(['mimetype', 'media_id'])
      .where('message_id', '=', messageId)
      .executeTakeFirst();
    // Every row names its chunks since 009c.
    return row === undefined || row.media_id === null ? undefined : { mimetype: row.mimetype, mediaId: row.media_id };
  },

  /** The message's media is no longer needed: its row, and its bytes in the chunk store. */
  deleteMedia: (db: Db, messageId: string): Promise<void> => messagesRepository.deleteMediaOf(db, [messageId]),

  /** deleteMedia for many messages at once. */
  deleteMediaOf: async (db: Db, messageIds: readonly string[]): Promise<void> => {
    if (messageIds.length === 0) return;
    const rows = await db
      .deleteFrom('message_media')
      .where('message_id', 'in', messageIds)
      .returning('media_id')
      .execute();
    await deleteMedia(
      db,
      rows.flatMap((row) => (row.media_id === null ? [] : [row.media_id])),
    );
  },

  find: (db: Db, accountId: number, id: string): Promise<MessageRow | undefined> =>
    db.selectFrom('messages').selectAll().where('id', '=', id).where('account_id', '=', accountId).executeTakeFirst(),

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

  /** An incoming message of the device, by the network's id of it. */
  findIncomingByNetworkId: (db: Db, deviceId: number, networkId: string): Promise<MessageRow | undefined> =>
    db
      .selectFrom('incoming_message_ids')
      .innerJoin('messages', 'messages.id', 'incoming_message_ids.message_id')
      .selectAll('messages')
      .where('incoming_message_ids.device_id', '=', deviceId)
      .where('incoming_message_ids.network_id', '=', networkId)
      .executeTakeFirst(),

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
    let query = db.selectFrom('messages').selectAll().where('account_id', '=', accountId);
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

  findIdempotencyKey: (db: Db, accountId: number, key: string) =>
    db
      .selectFrom('idempotency_keys')
      .select(['request_hash', 'response', 'created_at'])
      .where('account_id', '=', accountId)
      .where('key', '=', key)
      .executeTakeFirst(),

  releaseIdempotencyKey: async (db: Db, accountId: number, key: string): Promise<void> => {
    await db.deleteFrom('idempotency_keys').where('account_id', '=', accountId).where('key', '=', key).execute();
  },

  /** Takes the key for this request, or tells what the live earlier request with it stored. */
  claimIdempotencyKey: async (
    db: Db,
    accountId: number,
    key: string,
    requestHash: string,
    now: number,
    expiredBefore: number,
  ): Promise<{ claimed: true } | { claimed: false; requestHash: string; response: string }> => {
    const existing = await messagesRepository.findIdempotencyKey(db, accountId, key);
    if (existing !== undefined && existing.created_at >= expiredBefore) {
      return { claimed: false, requestHash: existing.request_hash, response: existing.response };
    }
    if (existing !== undefined) await messagesRepository.releaseIdempotencyKey(db, accountId, key);
    // Another process may claim the same key at the same moment (PostgreSQL): its insert holds ours until it
    // commits; then ours does nothing and the row it committed is read, as it would have been had it come first.
    const inserted = await db
      .insertInto('idempotency_keys')
      .values({ account_id: accountId, key, request_hash: requestHash, response: '', created_at: now })
      .onConflict((conflict) => conflict.columns(['account_id', 'key']).doNothing())
      .returning('key')
      .executeTakeFirst();
    if (inserted !== undefined) return { claimed: true };
    const winner = await messagesRepository.findIdempotencyKey(db, accountId, key);
    // Taken and given back again (its request was refused for quota): nobody holds it now; the caller answers "in use".
    if (winner === undefined) return { claimed: false, requestHash, response: '' };
    return { claimed: false, requestHash: winner.request_hash, response: winner.response };
  },

  saveIdempotentResponse: async (db: Db, accountId: number, key: string, response: string): Promise<void> => {
    await db
      .updateTable('idempotency_keys')
      .set({ response })
      .where('account_id', '=', accountId)
      .where('key', '=', key)
      .execute();
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
    await messagesRepository.deleteMediaOf(
      db,
      failed.map((row) => row.id),
    );
    await db
      .updateTable('devices')
      .set((eb) => ({
        quote_used: eb
          .case()
          .when('quote_used', '>', failed.length)
          .then(eb('quote_used', '-', failed.length))
          .else(0)
          .end(),
      }))
      .where('id', '=', deviceId)
      .execute();
    return failed;
  },

  // --- the outbound state machine (see src/dispatch/dispatcher.ts); every change only moves forward ---

  scheduleRetry: async (db: Db, id: string, attempts: number, nextAttemptAt: number): Promise<void> => {
    await db.updateTable('messages').set({ attempts, next_attempt_at: nextAttemptAt }).where('id', '=', id).execute();
  },

  /**
   * pending → sent; the media is no longer needed. With `readBack`, answers
   * the changed row (undefined when the message had moved on already);
   * without, only whether it changed. `renderedAs`: how the network delivered
   * it when not in its own form (docs/internals.md, WhatsApp and sandbox accounts), else null.
   */
  markSent: async <R extends boolean>(
    db: Db,
    id: string,
    at: number,
    hasMedia: boolean,
    readBack: R,
    renderedAs: string | null = null,
  ): Promise<StatusChanged<R>> => {
    const changed = await (readBack ? markSentChange.row : markSentChange.moved)(db, id, at, renderedAs);
    if (hasMedia) await messagesRepository.deleteMedia(db, id);
    return outcome(changed, readBack);
  },

  /** pending → failed; the media is no longer needed. */
  markFailed: async (db: Db, id: string, at: number, reason: string): Promise<MessageRow | undefined> => {
    const [row] = await markFailedStatement(db, id, at, reason);
    await messagesRepository.deleteMedia(db, id);
    return row;
  },

  /**
   * The network refused the message after taking it (docs/internals.md, WhatsApp and sandbox accounts). Its quota unit is not given back:
   * it reached the network. The media, if still held, goes as for any final state.
   */
  markRefused: async (
    db: Db,
    deviceId: number,
    id: string,
    at: number,
    reason: string,
  ): Promise<MessageRow | undefined> => {
    const [row] = await markRefusedStatement(db, id, deviceId, at, reason);
    if (row !== undefined) await messagesRepository.deleteMedia(db, id);
    return row;
  },

  /** pending|failed → sent: an ack after the send's wait ran out. `readBack` as for markSent. */
  markAckedLate: receipt(markAckedLateChange),

  /** pending|sent|failed → delivered (a receipt may overtake the `sent` write). `readBack` as for markSent. */
  markDelivered: receipt(markDeliveredChange),

  /**
   * The same changes as markSent (no media, no read-back), markDelivered and markRead, for many
   * messages in few statements (at most 256 a statement). Each only moves a message forward.
   */
  changeMany: async (db: Db, kind: ManyKind, changes: readonly ManyChange[]): Promise<void> => {
    for (let start = 0; start < changes.length; start += MAX_LOCKED_AT_ONCE) {
      const part = changes.slice(start, start + MAX_LOCKED_AT_ONCE);
      let size = 1;
      while (size < part.length) size *= 2;
      while (part.length < size) part.push(part[0]!);
      await manyStatement(kind, size)(
        db,
        ...part.map((c) => c.id),
        ...part.map((c) => c.deviceId),
        ...part.map((c) => c.at),
        ...(kind === 'sent' ? part.map((c) => c.renderedAs ?? null) : []),
      );
    }
  },

  /** A read receipt: read_at set once; reading implies delivery. `readBack` as for markSent. */
  markRead: receipt(markReadChange),
};
