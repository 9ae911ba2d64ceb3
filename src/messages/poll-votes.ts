/**
 * SQL and shape of votes on polls (issue 26; docs/webhooks.md, Poll votes).
 *
 * Owns: the `poll_votes` table (011c): one current vote per (poll, voter), a later one replacing it; reading them
 * for the message object; deleting them with their polls; and the tally the poll's message object shows (every
 * option, in the poll's order, with how many chose it and who).
 * Must never: decide which message a vote may name (poll-votes-record.ts does), or record for a message that was
 * not looked up first.
 */
import type { Db } from '../store/schema.js';

export interface PollVoteRow {
  readonly voter: string;
  readonly selected: ReadonlyArray<string>;
}

export interface PollTallyEntry {
  readonly option: string;
  readonly count: number;
  readonly voters: string[];
}

/** Message ids per statement: far below either store's limit on bound values. */
const CHUNK = 500;

export const pollVotesRepository = {
  /** Records `voter`'s vote; false when it is the vote already recorded (a repeat is not announced again). */
  async vote(db: Db, messageId: string, voter: string, selected: ReadonlyArray<string>, now: number) {
    const text = JSON.stringify(selected);
    const current = await db
      .selectFrom('poll_votes')
      .select('selected')
      .where('message_id', '=', messageId)
      .where('voter', '=', voter)
      .executeTakeFirst();
    if (current?.selected === text) return false;
    await db
      .insertInto('poll_votes')
      .values({ message_id: messageId, voter, selected: text, voted_at: now })
      .onConflict((oc) => oc.columns(['message_id', 'voter']).doUpdateSet({ selected: text, voted_at: now }))
      .execute();
    return true;
  },

  /** Each poll's votes, by message id, in the order they were (last) cast. */
  async forMessages(db: Db, ids: readonly string[]): Promise<Map<string, PollVoteRow[]>> {
    const byMessage = new Map<string, PollVoteRow[]>();
    for (let i = 0; i < ids.length; i += CHUNK) {
      const rows = await db
        .selectFrom('poll_votes')
        .select(['message_id', 'voter', 'selected'])
        .where('message_id', 'in', ids.slice(i, i + CHUNK))
        .orderBy('message_id')
        .orderBy('voted_at')
        .orderBy('voter')
        .execute();
      for (const { message_id, voter, selected } of rows) {
        const vote = { voter, selected: JSON.parse(selected) as string[] };
        const list = byMessage.get(message_id);
        if (list === undefined) byMessage.set(message_id, [vote]);
        else list.push(vote);
      }
    }
    return byMessage;
  },

  /** Deletes the votes on messages that are being deleted (retention). */
  async deleteOf(db: Db, ids: readonly string[]): Promise<void> {
    for (let i = 0; i < ids.length; i += CHUNK) {
      await db
        .deleteFrom('poll_votes')
        .where('message_id', 'in', ids.slice(i, i + CHUNK))
        .execute();
    }
  },
};

/** Every option of the poll, in its order, with the voters who chose it (in the order they voted). */
export function pollTally(options: ReadonlyArray<string>, votes: ReadonlyArray<PollVoteRow>): PollTallyEntry[] {
  return options.map((option) => {
    const voters = votes.filter((v) => v.selected.includes(option)).map((v) => v.voter);
    return { option, count: voters.length, voters };
  });
}
