/**
 * Claiming the Idempotency-Keys of a batch of requests accepted in one transaction (docs/internals.md, Sending):
 * sends (acceptance.ts) and reactions (reaction-writer.ts) alike.
 *
 * Owns: the order (arrival order), and what a key already taken answers: a live key stored by an earlier request is
 * a replay of its stored answer; a key an earlier request of the same batch claimed makes this request that one's
 * follower (it answers as that one's answer will be stored).
 * Must never: decide what a replay answers (idempotent-replay.ts), or save or release a key (the batch's writer).
 */
import type { Transaction } from 'kysely';
import type { Database } from '../store/schema.js';
import { idempotencyRepository } from './idempotency-repository.js';

/** What claiming needs of a request: its account, its key (if any) and the hash of its body. */
export interface KeyedRequest {
  readonly accountId: number;
  readonly key: string | undefined;
  readonly requestHash: string;
}

export interface BatchKeys {
  /** By request index: the stored request's hash and answer ('' while unanswered) of a key held before the batch. */
  readonly replays: Map<number, { readonly requestHash: string; readonly response: string }>;
  /** By request index: the index of the earlier request of this batch that claimed the same key. */
  readonly followers: Map<number, number>;
}

export async function claimBatchKeys(
  trx: Transaction<Database>,
  items: readonly KeyedRequest[],
  now: number,
  /** How long a stored key holds (IDEMPOTENCY_WINDOW_MS): an older one is taken over. */
  windowMs: number,
): Promise<BatchKeys> {
  const claimedHere = new Map<string, number>();
  const keys: BatchKeys = { replays: new Map(), followers: new Map() };
  for (const [i, item] of items.entries()) {
    if (item.key === undefined) continue;
    const slot = `${item.accountId}\u0000${item.key}`;
    const leader = claimedHere.get(slot);
    if (leader !== undefined) {
      keys.followers.set(i, leader);
      continue;
    }
    const claim = await idempotencyRepository.claimIdempotencyKey(
      trx,
      item.accountId,
      item.key,
      item.requestHash,
      now,
      now - windowMs,
    );
    if (claim.claimed) claimedHere.set(slot, i);
    else keys.replays.set(i, { requestHash: claim.requestHash, response: claim.response });
  }
  return keys;
}
