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
    const sorted = [...set].sort((a, b) => compareKeys(a.message_id, a.phone, b.message_id, b.phone));
    for (let i = 0; i < sorted.length; i += CHUNK) {
      await db
        .insertInto('message_reactions')
        .values(sorted.slice(i, i + CHUNK))
        .onConflict((oc) =>
          oc.columns(['message_id', 'phone']).doUpdateSet((eb) => ({
            emoji: eb.ref('excluded.emoji'),
            reacted_at: eb.ref('excluded.reacted_at'),
          })),
        )
        .execute();
    }
    for (let i = 0; i < taken.length; i += CHUNK) {
      await db
        .deleteFrom('message_reactions')
        .where((eb) =>
          eb.or(
            taken
              .slice(i, i + CHUNK)
              .map(([messageId, phone]) => eb.and([eb('message_id', '=', messageId), eb('phone', '=', phone)])),
          ),
        )
        .execute();
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
