/**
 * What a request answers whose Idempotency-Key a live earlier request holds (docs/api.md, Idempotency): the earlier
 * answer, a 409 when the body differs, or "in use" while the earlier request has not finished. One decision, used
 * by sends (service.ts) and message actions (actions.ts) alike, before their transaction and inside it.
 *
 * Owns: that decision, and the look-up of a live key before a request does any work.
 * Must never: write anything (claiming, saving and releasing keys are the accepting transactions' work).
 */
import { ApiError } from '../errors.js';
import type { Db } from '../store/schema.js';
import { IDEMPOTENCY_WINDOW_MS, type SendAnswer } from './acceptance.js';
import { idempotencyRepository } from './idempotency-repository.js';

/** The answer of a request replaying a key stored with `storedHash` and `response` ('' while it is unanswered). */
export function replayAnswer(storedHash: string, requestHash: string, response: string): SendAnswer {
  if (storedHash !== requestHash) {
    throw new ApiError('IDEMPOTENCY_REUSE', { error: 'this Idempotency-Key was used with a different body' });
  }
  // No answer stored with the key: its request has not finished (or was refused); ask to come back.
  if (response === '') {
    throw new ApiError('IDEMPOTENCY_IN_USE', {
      error: 'a request with this Idempotency-Key is being processed',
      headers: { 'retry-after': '1' },
    });
  }
  return JSON.parse(response) as SendAnswer;
}

/** The replayed answer when a live request holds the key already; null when the key is free (or expired). */
export async function replayOfStoredKey(
  db: Db,
  now: number,
  accountId: number,
  key: string,
  requestHash: string,
): Promise<SendAnswer | null> {
  const existing = await idempotencyRepository.findIdempotencyKey(db, accountId, key);
  if (existing === undefined || existing.created_at < now - IDEMPOTENCY_WINDOW_MS) return null;
  return replayAnswer(existing.request_hash, requestHash, existing.response);
}
