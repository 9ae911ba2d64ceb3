/**
 * Votes phones cast on polls (issue 26; docs/webhooks.md, Poll votes): the network's `poll_vote` recorded and
 * announced as `poll.vote {message_id, from, selected}`.
 *
 * Owns: finding the poll a vote names (one this device sent, by our id; one it received, e.g. a member's poll in a
 * group, by the network's id), keeping only the poll's own options (in its order, each once, at most
 * `selectable_count`; a network that names them by hash, poll-options.ts, matched to their texts), and recording the vote (`poll_votes`) with its event in the same transaction. Called by
 * events/incoming.ts for the votes that pass the device's inbox, so a vote is written after the poll it names.
 * A vote on a message the gateway does not have, or on one that is not a poll, or naming an option the poll does
 * not have or more options than it allows, is dropped with a debug log. The same vote again is not announced again.
 * Must never: announce a vote that was not stored.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Transaction } from 'kysely';
import type { DeviceRow } from '../devices/repository.js';
import { recordEvent } from '../events/record.js';
import type { NetworkEvent } from '../network/network.js';
import { optionsForHashes } from '../network/poll-options.js';
import type { Database } from '../store/schema.js';
import { incomingIdsRepository } from './incoming-ids-repository.js';
import { pollVotesRepository } from './poll-votes.js';
import type { MessageRow } from './repository.js';

export type PollVoteEvent = Extract<NetworkEvent, { type: 'poll_vote' }>;

/** A poll's question, options and how many of them one voter may choose, from its stored params. */
export interface StoredPoll {
  readonly options: string[];
  readonly selectableCount: number;
}

export function storedPoll(row: Pick<MessageRow, 'type' | 'params'>): StoredPoll | null {
  if (row.type !== 'poll') return null;
  const params = JSON.parse(row.params) as { options?: unknown; selectable_count?: unknown };
  if (!Array.isArray(params.options)) return null;
  const options = params.options.filter((o): o is string => typeof o === 'string');
  const count = typeof params.selectable_count === 'number' ? params.selectable_count : 1;
  // 0 is how WhatsApp says "any number of them".
  return { options, selectableCount: count > 0 ? count : options.length };
}

/** Why `selected` is not a vote on `poll`, or null when it is one. */
export function voteProblem(poll: StoredPoll, selected: ReadonlyArray<string>): string | null {
  const unknown = selected.filter((s) => !poll.options.includes(s));
  if (unknown.length > 0) return `the poll has no option ${JSON.stringify(unknown[0])}`;
  if (new Set(selected).size !== selected.length) return 'an option is chosen twice';
  if (selected.length > poll.selectableCount) {
    return `the poll allows at most ${poll.selectableCount} option${poll.selectableCount === 1 ? '' : 's'}`;
  }
  return null;
}

/** Records one vote and its event; false when nothing was recorded (dropped, or the same vote again). */
export async function recordPollVote(
  trx: Transaction<Database>,
  device: DeviceRow,
  event: PollVoteEvent,
  now: number,
  logger: FastifyBaseLogger,
): Promise<boolean> {
  const dropped = (why: string) => {
    logger.debug({ deviceId: device.id, target: event.target, from: event.from }, `poll vote dropped: ${why}`);
    return false;
  };
  const row = await incomingIdsRepository.findTarget(trx, device.id, event.target);
  if (row === undefined) return dropped('the gateway does not have the poll');
  const poll = storedPoll(row);
  if (poll === null) return dropped('the message is not a poll');
  const named = event.hashed === true ? optionsForHashes(poll.options, event.selected) : event.selected;
  if (named === null) return dropped('a hash names no option of the poll');
  const problem = voteProblem(poll, named);
  if (problem !== null) return dropped(problem);
  const selected = poll.options.filter((o) => named.includes(o));
  if (!(await pollVotesRepository.vote(trx, row.id, event.from, selected, now))) return false;
  await recordEvent(trx, device, 'poll.vote', { message_id: row.id, from: event.from, selected }, now);
  return true;
}
