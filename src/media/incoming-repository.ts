/**
 * SQL for the media of incoming messages: the `incoming_media` table (011b) and the shared secret of signed media
 * URLs (`gateway_secrets`).
 *
 * Owns: every statement on those tables. A row's status moves `pending` → `stored` | `too_large` | `failed`, and
 * `stored` → `expired`; each move names the status it leaves, so two nodes (or a late download and the retention
 * job) never both win.
 * Must never: read or write media bytes (chunks.ts), or decide a rule (the downloader and the retention job do).
 */
import { sql, type Selectable, type SqlBool } from 'kysely';
import { onPostgres } from '../store/dialect.js';
import type { Db, IncomingMediaTable } from '../store/schema.js';

export type IncomingMediaRow = Selectable<IncomingMediaTable>;
export type IncomingMediaStatus = IncomingMediaRow['status'];

const asRow = (row: IncomingMediaRow): IncomingMediaRow => ({
  ...row,
  account_id: Number(row.account_id),
  device_id: Number(row.device_id),
  size: row.size === null ? null : Number(row.size),
  attempts: Number(row.attempts),
  next_attempt_at: Number(row.next_attempt_at),
  created_at: Number(row.created_at),
  stored_at: row.stored_at === null ? null : Number(row.stored_at),
});

/**
 * `device_id` is one of `ids`, as one parameter however many there are: an array on PostgreSQL, JSON read with
 * `json_each` on SQLite. A list of placeholders made a statement text per number of devices a node holds, each
 * prepared and kept (a gateway pairing 1,000 devices made 2,000 of them, with up to 1,000 placeholders each).
 */
function deviceAmong(db: Db, ids: readonly number[]) {
  return onPostgres(db)
    ? sql<SqlBool>`device_id = any(${[...ids]}::bigint[])`
    : sql<SqlBool>`device_id in (select value from json_each(${JSON.stringify(ids)}))`;
}

export const incomingMediaRepository = {
  insert: async (db: Db, row: IncomingMediaRow): Promise<void> => {
    await db.insertInto('incoming_media').values(row).execute();
  },

  find: async (db: Db, mediaId: string): Promise<IncomingMediaRow | undefined> => {
    const row = await db.selectFrom('incoming_media').selectAll().where('media_id', '=', mediaId).executeTakeFirst();
    return row === undefined ? undefined : asRow(row);
  },

  /** The media rows of these messages, by message id. */
  forMessages: async (db: Db, messageIds: readonly string[]): Promise<Map<string, IncomingMediaRow>> => {
    const found = new Map<string, IncomingMediaRow>();
    for (let i = 0; i < messageIds.length; i += 500) {
      const rows = await db
        .selectFrom('incoming_media')
        .selectAll()
        .where('message_id', 'in', messageIds.slice(i, i + 500))
        .execute();
      for (const row of rows) found.set(row.message_id, asRow(row));
    }
    return found;
  },

  /** Pending downloads of these devices due by `now`, the longest waiting first. */
  due: async (db: Db, deviceIds: readonly number[], now: number, limit: number): Promise<IncomingMediaRow[]> => {
    if (deviceIds.length === 0) return [];
    const rows = await db
      .selectFrom('incoming_media')
      .selectAll()
      .where('status', '=', 'pending')
      .where('next_attempt_at', '<=', now)
      .where(deviceAmong(db, deviceIds))
      .orderBy('next_attempt_at')
      .limit(limit)
      .execute();
    return rows.map(asRow);
  },

  /** When the next pending download of these devices is due, or null when none is pending. */
  nextDue: async (db: Db, deviceIds: readonly number[]): Promise<number | null> => {
    if (deviceIds.length === 0) return null;
    const row = await db
      .selectFrom('incoming_media')
      .select((eb) => eb.fn.min('next_attempt_at').as('at'))
      .where('status', '=', 'pending')
      .where(deviceAmong(db, deviceIds))
      .executeTakeFirst();
    return row?.at === null || row?.at === undefined ? null : Number(row.at);
  },

  markStored: async (db: Db, mediaId: string, size: number, sha256: string, now: number): Promise<boolean> => {
    const result = await db
      .updateTable('incoming_media')
      .set({ status: 'stored', size, sha256, stored_at: now, network_ref: null })
      .where('media_id', '=', mediaId)
      .where('status', '=', 'pending')
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  },

  /** The download ended without bytes kept: `too_large` or `failed`. */
  markEnded: async (
    db: Db,
    mediaId: string,
    status: 'too_large' | 'failed',
    attempts: number,
    size: number | null,
  ): Promise<void> => {
    await db
      .updateTable('incoming_media')
      .set({ status, attempts, network_ref: null, ...(size === null ? {} : { size }) })
      .where('media_id', '=', mediaId)
      .where('status', '=', 'pending')
      .execute();
  },

  retryAt: async (db: Db, mediaId: string, attempts: number, at: number): Promise<void> => {
    await db
      .updateTable('incoming_media')
      .set({ attempts, next_attempt_at: at })
      .where('media_id', '=', mediaId)
      .where('status', '=', 'pending')
      .execute();
  },

  /** Up to `limit` media stored before `before` (their bytes are to go). */
  storedBefore: async (db: Db, before: number, limit: number): Promise<string[]> =>
    (
      await db
        .selectFrom('incoming_media')
        .select('media_id')
        .where('status', '=', 'stored')
        .where('stored_at', '<', before)
        .limit(limit)
        .execute()
    ).map((row) => row.media_id),

  markExpired: async (db: Db, mediaIds: readonly string[]): Promise<void> => {
    if (mediaIds.length === 0) return;
    await db
      .updateTable('incoming_media')
      .set({ status: 'expired' })
      .where('media_id', 'in', mediaIds)
      .where('status', '=', 'stored')
      .execute();
  },

  /** Up to `limit` rows whose message is gone (deleted by message retention): their media goes with it. */
  orphans: async (db: Db, limit: number): Promise<string[]> =>
    (
      await db
        .selectFrom('incoming_media')
        .select('media_id')
        .where((eb) =>
          eb.not(
            eb.exists(eb.selectFrom('messages').select('id').whereRef('messages.id', '=', 'incoming_media.message_id')),
          ),
        )
        .limit(limit)
        .execute()
    ).map((row) => row.media_id),

  deleteRows: async (db: Db, mediaIds: readonly string[]): Promise<void> => {
    if (mediaIds.length === 0) return;
    await db.deleteFrom('incoming_media').where('media_id', 'in', mediaIds).execute();
  },

  /** The secret named `name`, made from `fresh` by whichever caller comes first (every node reads the same). */
  secret: async (db: Db, name: string, fresh: string, now: number): Promise<string> => {
    await db
      .insertInto('gateway_secrets')
      .values({ name, secret: fresh, created_at: now })
      .onConflict((oc) => oc.column('name').doNothing())
      .execute();
    const row = await db
      .selectFrom('gateway_secrets')
      .select('secret')
      .where('name', '=', name)
      .executeTakeFirstOrThrow();
    return row.secret;
  },
};
