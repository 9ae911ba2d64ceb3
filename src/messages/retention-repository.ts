/**
 * The SQL of message retention (docs/internals.md, Retention): deleting old messages with what hangs
 * off them. The retention job (src/store/retention.ts) decides when and how much; it is handed this
 * by the composition root, so the store never reaches up into the messages feature.
 *
 * Owns: one batch of deleting messages older than a cut-off, with their media and member receipts.
 * Must never: decide what is old (the caller passes the cut-off), take more than `limit` messages
 * at once, or delete a message still queued (`pending`).
 */
import { sql } from 'kysely';
import { forgetChatMessages } from '../chats/maintain.js';
import type { Db } from '../store/schema.js';
import { messageMediaRepository } from './media-repository.js';
import { pollVotesRepository } from './poll-votes.js';
import { reactionsRepository } from './reactions.js';
import { receiptsRepository } from './receipts.js';

export const messageRetentionRepository = {
  /**
   * Deletes up to `limit` messages created before `before` that are no longer
   * queued, with their media. Found by id: a message id is a ULID of its
   * acceptance (or arrival) time, so every id below `idBelow` is older.
   */
  deleteMessages: async (db: Db, before: number, idBelow: string, limit: number): Promise<number> => {
    const rows = await db
      .selectFrom('messages')
      .select('id')
      .where('id', '<', idBelow)
      .where('created_at', '<', before)
      .where(sql<boolean>`status <> 'pending'`)
      .orderBy('id')
      .limit(limit)
      .execute();
    const ids = rows.map((row) => row.id);
    if (ids.length === 0) return 0;
    await messageMediaRepository.deleteMediaOf(db, ids);
    await receiptsRepository.deleteOf(db, ids);
    await reactionsRepository.deleteOf(db, ids);
    await pollVotesRepository.deleteOf(db, ids);
    const deleted = await db
      .deleteFrom('messages')
      .where('id', 'in', ids)
      .where(sql<boolean>`status <> 'pending'`)
      .returning(['id', 'device_id', 'chat', 'direction', 'read_at'])
      .execute();
    // The chats of the deleted messages: their unread counts and last messages (src/chats/maintain.ts).
    await forgetChatMessages(db, deleted, Date.now());
    return deleted.length;
  },
};
