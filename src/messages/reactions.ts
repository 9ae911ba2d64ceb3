/**
 * SQL for phones' reactions to messages (issue 26; docs/webhooks.md, Reactions, edits and deletes).
 *
 * Owns: the `message_reactions` table (010a): one reaction per (message, phone), a later one replacing it and an
 * empty one taking it away; reading them for the message object; deleting them with their messages.
 * Must never: decide whose message a reaction may name (events/message-changes.ts does), or record for a message
 * that was not looked up first.
 */
import { sql } from 'kysely';
import { onPostgres } from '../store/dialect.js';
import { compiled, prepared } from '../store/prepared.js';
import type { Db } from '../store/schema.js';

export interface ReactionRow {
  readonly from: string;
  readonly emoji: string;
}

/** A stored reaction with its message and time (the batched reactions of actions, reaction-writer.ts). */
export interface StoredReaction {
  readonly message_id: string;
  readonly phone: string;
  readonly emoji: string;
  readonly reacted_at: number;
}

/** Message ids per statement: far below either store's limit on bound values. */
const CHUNK = 500;

// The reactions' read of a batch of reactions (reaction-writer.ts): one statement text for any number of messages.
const storedOfPostgres = prepared(1, (db, ids: readonly string[]) =>
  compiled(
    db,
    sql<StoredReaction>`select message_id, phone, emoji, reacted_at from message_reactions
      where message_id = any(${ids}::text[])`,
  ),
);
const storedOfSqlite = prepared(1, (db, idsJson: string) =>
  compiled(
    db,
    sql<StoredReaction>`select message_id, phone, emoji, reacted_at from message_reactions
      where message_id in (select value from json_each(${idsJson}))`,
  ),
);

// The end state of a batch of reactions (writeMany): one statement text each for any number of pairs, the pairs in
// one parameter (arrays on PostgreSQL, JSON on SQLite, whose `insert ... select` needs its `where` to tell the
// select from the `on conflict`).
const upsertPostgres = prepared(
  4,
  (db, messageIds: readonly string[], phones: readonly string[], emojis: readonly string[], at: readonly number[]) =>
    compiled(
      db,
      sql`insert into message_reactions (message_id, phone, emoji, reacted_at)
        select * from unnest(${messageIds}::text[], ${phones}::text[], ${emojis}::text[], ${at}::bigint[])
        on conflict (message_id, phone) do update set emoji = excluded.emoji, reacted_at = excluded.reacted_at`,
    ),
);
/** Rows as JSON: `[[message_id, phone, emoji, reacted_at], ...]`. */
const upsertSqlite = prepared(1, (db, rowsJson: string) =>
  compiled(
    db,
    sql`insert into message_reactions (message_id, phone, emoji, reacted_at)
      select json_extract(value, '$[0]'), json_extract(value, '$[1]'), json_extract(value, '$[2]'),
        json_extract(value, '$[3]') from json_each(${rowsJson}) where true
      on conflict (message_id, phone) do update set emoji = excluded.emoji, reacted_at = excluded.reacted_at`,
  ),
);
const deletePostgres = prepared(2, (db, messageIds: readonly string[], phones: readonly string[]) =>
  compiled(
    db,
    sql`delete from message_reactions
      where (message_id, phone) in (select * from unnest(${messageIds}::text[], ${phones}::text[]))`,
  ),
);
/** Pairs as JSON: `[[message_id, phone], ...]`. */
const deleteSqlite = prepared(1, (db, pairsJson: string) =>
  compiled(
    db,
    sql`delete from message_reactions
      where (message_id, phone) in (select json_extract(value, '$[0]'), json_extract(value, '$[1]') from json_each(${pairsJson}))`,
  ),
);

export const reactionsRepository = {
  /**
   * Records `phone`'s reaction to the message; `""` takes it away. False when nothing changed (the same reaction
   * again, or one taken away that was not there): such a repeat is not announced again.
   */
  async react(db: Db, messageId: string, phone: string, emoji: string, now: number): Promise<boolean> {
    const current = await db
      .selectFrom('message_reactions')
      .select('emoji')
      .where('message_id', '=', messageId)
      .where('phone', '=', phone)
      .executeTakeFirst();
    if ((current?.emoji ?? '') === emoji) return false;
    if (emoji === '') {
      await db.deleteFrom('message_reactions').where('message_id', '=', messageId).where('phone', '=', phone).execute();
      return true;
    }
    await db
      .insertInto('message_reactions')
      .values({ message_id: messageId, phone, emoji, reacted_at: now })
      .onConflict((oc) => oc.columns(['message_id', 'phone']).doUpdateSet({ emoji, reacted_at: now }))
      .execute();
    return true;
  },

  /** Every stored reaction to these messages, in no particular order (one prepared statement for any number). */
  async storedOf(db: Db, ids: readonly string[]): Promise<StoredReaction[]> {
    if (ids.length === 0) return [];
    return onPostgres(db) ? storedOfPostgres(db, ids) : storedOfSqlite(db, JSON.stringify(ids));
  },

  /**
   * Writes the end state of many (message, phone) pairs at once: `set` inserted or replaced in one multi-row upsert,
   * `taken` deleted in one statement. Each pair appears at most once in all (the caller folds a batch's reactions).
   * Rows are written in key order, so two processes writing overlapping batches take their row locks in one order.
   */
  async writeMany(
    db: Db,
    set: readonly StoredReaction[],
    taken: ReadonlyArray<readonly [string, string]>,
  ): Promise<void> {
    if (set.length > 0) {
      const sorted = [...set].sort((a, b) => compareKeys(a.message_id, a.phone, b.message_id, b.phone));
      if (onPostgres(db)) {
        await upsertPostgres(
          db,
          sorted.map((r) => r.message_id),
          sorted.map((r) => r.phone),
          sorted.map((r) => r.emoji),
          sorted.map((r) => r.reacted_at),
        );
      } else {
        await upsertSqlite(db, JSON.stringify(sorted.map((r) => [r.message_id, r.phone, r.emoji, r.reacted_at])));
      }
    }
    if (taken.length > 0) {
      if (onPostgres(db)) {
        await deletePostgres(
          db,
          taken.map(([messageId]) => messageId),
          taken.map(([, phone]) => phone),
        );
      } else {
        await deleteSqlite(db, JSON.stringify(taken));
      }
    }
  },

  /** Each message's reactions, by message id, oldest first. */
  async forMessages(db: Db, ids: readonly string[]): Promise<Map<string, ReactionRow[]>> {
    const byMessage = new Map<string, ReactionRow[]>();
    for (let i = 0; i < ids.length; i += CHUNK) {
      const rows = await db
        .selectFrom('message_reactions')
        .select(['message_id', 'phone', 'emoji'])
        .where('message_id', 'in', ids.slice(i, i + CHUNK))
        .orderBy('message_id')
        .orderBy('reacted_at')
        .orderBy('phone')
        .execute();
      for (const { message_id, phone, emoji } of rows) {
        const list = byMessage.get(message_id);
        if (list === undefined) byMessage.set(message_id, [{ from: phone, emoji }]);
        else list.push({ from: phone, emoji });
      }
    }
    return byMessage;
  },

  /** Deletes the reactions to messages that are being deleted (retention). */
  async deleteOf(db: Db, ids: readonly string[]): Promise<void> {
    for (let i = 0; i < ids.length; i += CHUNK) {
      await db
        .deleteFrom('message_reactions')
        .where('message_id', 'in', ids.slice(i, i + CHUNK))
        .execute();
    }
  },
};

function compareKeys(messageA: string, phoneA: string, messageB: string, phoneB: string): number {
  if (messageA !== messageB) return messageA < messageB ? -1 : 1;
  return phoneA < phoneB ? -1 : phoneA > phoneB ? 1 : 0;
}
