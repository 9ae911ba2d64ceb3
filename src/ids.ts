/**
 * Identifiers: time-sortable ULIDs for stored things (messages, events), and
 * cheap request ids.
 *
 * Owns: where their randomness comes from. The ulid package asks the OS for
 * randomness one byte per character; on a hot path that cost more than the
 * rest of a request, so randomness is drawn in 8 KiB blocks and handed out
 * from there (still cryptographically strong).
 */
import { randomBytes } from 'node:crypto';
import { monotonicFactory } from 'ulid';

const POOL_SIZE = 8192;
let pool = randomBytes(POOL_SIZE);
let offset = 0;

function pooledRandom(): number {
  if (offset >= POOL_SIZE) {
    pool = randomBytes(POOL_SIZE);
    offset = 0;
  }
  return pool[offset++]! / 256;
}

/** A new ULID, increasing within this process even inside one millisecond. */
export const newUlid = monotonicFactory(pooledRandom);

const requestPrefix = randomBytes(4).toString('hex');
let requestCounter = 0;

/** A request id unique within this process's lifetime and unlikely to collide across processes. */
export function newRequestId(): string {
  requestCounter = (requestCounter + 1) % Number.MAX_SAFE_INTEGER;
  return `${requestPrefix}-${requestCounter.toString(36)}`;
}
