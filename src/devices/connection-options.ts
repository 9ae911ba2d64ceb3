/**
 * What the connection manager (src/devices/connections.ts) is built with.
 *
 * Owns: the shape of its options and what each means.
 * Must never: hold behaviour; defaults are the manager's.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../clock.js';
import type { Network } from '../network/network.js';
import type { Store } from '../store/store.js';
import type { Db } from '../store/schema.js';
import type { DeviceHoldings } from '../cluster/holdings.js';

export interface ConnectionManagerOptions {
  readonly store: Store;
  readonly clock: Clock;
  readonly network: Network;
  readonly serverName: string;
  /** Which devices this node holds, and the fence of their writes. */
  readonly holdings: DeviceHoldings;
  readonly logger: FastifyBaseLogger;
  readonly pairingWindowMs: number;
  /** How long a QR request waits for the network's first code. */
  readonly qrWaitMs?: number;
  readonly maxConcurrentConnects?: number;
  readonly reconnectBaseMs?: number;
  readonly reconnectMaxMs?: number;
  /** Uniform numbers in [0, 1) for the reconnect jitter (default Math.random; tests fix them). */
  readonly reconnectJitter?: () => number;
  /** Earliest reconnect after another client replaced the session (docs/internals.md, WhatsApp and sandbox accounts: at least 60 s). */
  readonly replacedRetryMs?: number;
  /** Earliest reconnect after the network refused the protocol version (docs/internals.md, WhatsApp and sandbox accounts: at least 10 min). */
  readonly outdatedRetryMs?: number;
  /**
   * The network a pairing of the account's device is on, recorded with the pairing (docs/networks-per-device.md: the device
   * stays on it). Read in the pairing's transaction.
   */
  readonly pairingNetwork: (accountId: number, db: Db) => Promise<string>;
}
