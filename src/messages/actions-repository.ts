/**
 * SQL for message actions (actions.ts; docs/internals.md, Message actions).
 *
 * Owns: the one-statement decisions of edits, cancels and deletes (each an UPDATE whose WHERE is the whole rule, so
 * two requests at once, or a request and the dispatcher's claim, can never both win), the dispatcher's claim of a
 * message for a send attempt, the queue rows of actions, and the unread incoming messages of a chat.
 * Must never: decide what a request may ask (actions.ts validates), or give quota back for anything but a cancel.
 */
import { sql } from 'kysely';
import { onPostgres } from '../store/dialect.js';
import { compiled, prepared } from '../store/prepared.js';
import type { Db } from '../store/schema.js';
import type { MessageRow, NewMessageRow } from './repository.js';
import { queueSpan, type QueuedMessage } from './queue-span.js';

/**
 * The claim names its run twice: by id, and by where the run lies in its device's queue (the run is a stretch of
 * consecutive `pending` messages of one device, in `seq` order). The second says nothing new, but it gives
 * PostgreSQL an exact way in. Asked only for ids and `status = 'pending'`, the planner may answer from the
 * pending-only index (migration 003b) whenever its statistics hold few pending messages: on a table not analyzed
 * since a burst was queued (a new store, or a campaign on top of a long history) it then read the whole queue for
 * every run of 100 (10–73 ms with 100,000 queued, against 4 ms; docs/internals.md, The queue's statements and the
 * planner).
 */
const claimManyPostgres = prepared(5, (db, ids: string[], deviceId: number, first: number, last: number, now: number) =>
  compiled(
    db,
    sql<{ id: string }>`update messages set claimed_at = ${now}
      where device_id = ${deviceId} and seq between ${first} and ${last}
        and id = any(${ids}::text[]) and status = 'pending' returning id`,
  ),
);
const claimManySqlite = prepared(2, (db, idsJson: string, now: number) =>
  compiled(
    db,
    sql<{ id: string }>`update messages set claimed_at = ${now}
      where id in (select value from json_each(${idsJson})) and status = 'pending' returning id`,
  ),
);

export const EDIT_WINDOW_MS = 15 * 60_000;
export const DELETE_WINDOW_MS = 48 * 60 * 60_000;
/** Types whose text (chat) or caption (media) can be edited. */
export const EDITABLE_TYPES = ['chat', 'image', 'video', 'file'] as const;
/** At most this many unread messages of a chat are marked read by one request (the oldest beyond it stay unread). */
export const READ_AT_ONCE = 1000;

export const actionsRepository = {
  /**
   * The new text of a message of ours, if it may still be edited now: outgoing, of an editable type, `sent` or
   * `delivered` no longer than the window ago, not deleted. Undefined: it may not (nothing changed).
   */
  edit: (db: Db, id: string, text: string, params: string, now: number): Promise<MessageRow | undefined> =>
    db
      .updateTable('messages')
      .set({ message: text, params, edited_at: now })
      .where('id', '=', id)
      .where('direction', '=', 'outgoing')
      .where('type', 'in', EDITABLE_TYPES)
      .where('status', 'in', ['sent', 'delivered'])
      .where('sent_at', '>=', now - EDIT_WINDOW_MS)
      .where('deleted_at', 'is', null)
      .returningAll()
      .executeTakeFirst(),

  /**
   * Cancel or delete for everyone, decided in one statement: a message of ours still `pending` and not claimed by
   * the dispatcher becomes `failed` (`cancelled`); one `sent`/`delivered` within the window gets `deleted_at`.
   * Undefined: neither (already deleted or failed, being sent now, or too old).
   */
  cancelOrDelete: (db: Db, id: string, now: number, reason: string): Promise<MessageRow | undefined> => {
    const cancellable = sql<boolean>`status = 'pending' and claimed_at is null`;
    const deletable = sql<boolean>`status in ('sent', 'delivered') and sent_at >= ${now - DELETE_WINDOW_MS}`;
    return (
      db
        .updateTable('messages')
        .set({
          status: sql<string>`case when ${cancellable} then 'failed' else status end`,
          failed_at: sql<number | null>`case when ${cancellable} then ${now} else failed_at end`,
          failed_reason: sql<string | null>`case when ${cancellable} then ${reason} else failed_reason end`,
          deleted_at: sql<number | null>`case when ${cancellable} then deleted_at else ${now} end`,
        })
        .where('id', '=', id)
        .where('direction', '=', 'outgoing')
        .where('deleted_at', 'is', null)
        // Parenthesised whole: the conditions before it are joined with `and`, which binds tighter than `or`.
        .where(sql<boolean>`((${cancellable}) or (${deletable}))`)
        .returningAll()
        .executeTakeFirst()
    );
  },

  /**
   * The dispatcher takes a message for a send attempt: true when it is still `pending` (a cancel can no longer win),
   * false when it was cancelled (or otherwise ended) first.
   */
  claim: async (db: Db, id: string, now: number): Promise<boolean> => {
    const claimed = await db
      .updateTable('messages')
      .set({ claimed_at: now })
      .where('id', '=', id)
      .where('status', '=', 'pending')
      .returning('id')
      .executeTakeFirst();
    return claimed !== undefined;
  },

  /**
   * The dispatcher takes a run of a device's queue for send attempts, in one statement: answers the ids it took
   * (those still `pending`); an id not answered was cancelled (or otherwise ended) first.
   */
  claimMany: async (db: Db, deviceId: number, run: readonly QueuedMessage[], now: number): Promise<Set<string>> => {
    const ids = run.map((message) => message.id);
    if (ids.length === 0) return new Set();
    if (ids.length === 1) return new Set((await actionsRepository.claim(db, ids[0]!, now)) ? ids : []);
    if (!onPostgres(db)) return new Set((await claimManySqlite(db, JSON.stringify(ids), now)).map((row) => row.id));
    const { first, last } = queueSpan(run);
    const claimed = await claimManyPostgres(db, ids, deviceId, first, last, now);
    return new Set(claimed.map((row) => row.id));
  },

  /** Claims of a run whose messages never went to the network (the run stopped before them): a cancel may end them again. */
  unclaim: async (db: Db, ids: readonly string[]): Promise<void> => {
    if (ids.length === 0) return;
    await db
      .updateTable('messages')
      .set({ claimed_at: null })
      .where('id', 'in', [...ids])
      .where('status', '=', 'pending')
      .execute();
  },

  insertAction: async (db: Db, row: NewMessageRow): Promise<void> => {
    await db.insertInto('messages').values(row).execute();
  },

  /**
   * The device's unread incoming messages up to `seq` (the target's), from `sender` when given (a chat with one
   * person; the caller keeps those of the chat), oldest first, at most READ_AT_ONCE.
   */
  unreadUpTo: (db: Db, deviceId: number, seq: number, sender: string | null): Promise<MessageRow[]> => {
    let query = db
      .selectFrom('messages')
      .selectAll()
      .where('device_id', '=', deviceId)
      .where('direction', '=', 'incoming')
      .where('read_at', 'is', null)
      .where('seq', '<=', seq);
    if (sender !== null) query = query.where('sender', '=', sender);
    return query
      .orderBy('seq', 'desc')
      .limit(READ_AT_ONCE)
      .execute()
      .then((rows) => rows.reverse());
  },

  /** Marks these messages read now; answers the ids this statement marked (another request may have marked some). */
  markRead: async (db: Db, ids: readonly string[], now: number): Promise<Set<string>> => {
    if (ids.length === 0) return new Set();
    const rows = await db
      .updateTable('messages')
      .set({ read_at: now })
      .where('id', 'in', ids)
      .where('read_at', 'is', null)
      .returning('id')
      .execute();
    return new Set(rows.map((row) => row.id));
  },
};
