/**
 * SQL for phones' reactions to messages (issue 26; docs/webhooks.md, Reactions, edits and deletes).
 *
 * Owns: the `message_reactions` table (010a): one reaction per (message, phone), a later one replacing it and an
 * empty one taking it away; reading them for the message object; deleting them with their messages.
 * Must never: decide whose message a reaction may name (events/message-changes.ts does), or record for a message
 * that was not looked up first.
 */
import type { Db } from '../store/schema.js';

export interface ReactionRow {
  readonly from: string;
  readonly emoji: string;
}

/** Message ids per statement: far below either store's limit on bound values. */
const CHUNK = 500;

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
