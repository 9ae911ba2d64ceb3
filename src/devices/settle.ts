/**
 * Waiting for the background writes of closed connections (a WhatsApp session's credentials and keys) before a
 * device is handed on, so the next holder reads the session as last written.
 *
 * Owns: the limit of that wait. Must never: wait without a limit (a store that does not answer must not hold a
 * handover up for ever) or fail (a connection whose writes failed has nothing more to wait for).
 */
import type { NetworkConnection } from '../network/network.js';

/**
 * How long a closed connection's background writes (a WhatsApp session's credentials and keys) are waited for
 * before its device is let go all the same: the next holder should read the session as last written, but a store
 * that does not answer must not hold a handover up for ever.
 */
const SETTLE_LIMIT_MS = 5_000;

/** Waits until the connections' background writes are over, or SETTLE_LIMIT_MS. */
export async function settled(connections: ReadonlyArray<NetworkConnection | null>): Promise<void> {
  const writes = connections.map((conn) => conn?.settled?.().catch(() => undefined));
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<void>((resolve) => (timer = setTimeout(resolve, SETTLE_LIMIT_MS)));
  try {
    await Promise.race([Promise.allSettled(writes), limit]);
  } finally {
    clearTimeout(timer);
  }
}
