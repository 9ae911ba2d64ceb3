/**
 * The WhatsApp network (docs/internals.md, WhatsApp and sandbox accounts): the seam's `Network` over Baileys
 * 7.0.0-rc14, with each device's state in the gateway's store, sealed.
 *
 * Owns: making connections and what they share (the sealer, the state port,
 * the socket factory, the library's logger). Everything WhatsApp-specific
 * stays inside this folder.
 * Must never: hold state of its own beyond the open connections and their
 * sessions' writes under way.
 */
import type { Logger } from 'pino';
import { INITIAL_PREKEY_COUNT } from 'baileys';
import { captureLibraryConsole } from './library-console.js';
import type { NetworkKeys } from '../../config.js';
import type { Network } from '../network.js';
import type { NetworkStateStore } from '../state.js';
import { WhatsAppConnection } from './connection.js';
import { OFFER_TTL_MS } from './interactive.js';
import { Sealer } from './seal.js';
import { SessionWrites } from './session-writes.js';
import { realSocketFactory, type SocketFactory } from './socket-port.js';

/** The library and the exact version the connector is built and tested against. */
export const WHATSAPP_LIBRARY = 'baileys 7.0.0-rc14';

export interface WhatsAppNetworkOptions {
  readonly states: NetworkStateStore;
  readonly keys: NetworkKeys;
  readonly logger: Logger;
  /** Makes sockets; the real one unless a test scripts its own. */
  readonly factory?: SocketFactory;
  readonly ackTimeoutMs?: number;
  /** How long a media upload may stall before the send is a transient failure (default 60 s). */
  readonly uploadTimeoutMs?: number;
  /** How long records of sent messages are kept for resend requests (docs/internals.md, Retention: 14 days). */
  readonly sentRetentionMs?: number;
  /** How often old sent records and expired offers are deleted. */
  readonly pruneIntervalMs?: number;
  /** `list` and `template` in WhatsApp's native interactive form instead of as text (experimental; default false). */
  readonly nativeInteractive?: boolean;
  /** Days of history kept from the sync at pairing (`GATEWAY_HISTORY_DAYS`; default 0: none asked for or kept). */
  readonly historyDays?: number;
  /**
   * Pre-keys made off the event loop between pairing and the first login (pre-keys.ts). Default: the 812 the
   * library uploads at that login (INITIAL_PREKEY_COUNT); it makes any it does not find itself, on the event loop.
   * Only a socket that uploads none needs fewer: the scripted socket of the connector's tests.
   */
  readonly preKeysAtPairing?: number;
}

const DAY_MS = 24 * 60 * 60 * 1000;
/** Rows deleted per statement: small batches, so clean-up never holds the store for long. */
const PRUNE_BATCH = 500;

export function createWhatsAppNetwork(options: WhatsAppNetworkOptions): Network {
  const sealer = new Sealer(options.keys);
  const open = new Set<WhatsAppConnection>();
  const deps = {
    states: options.states,
    sealer,
    factory: options.factory ?? realSocketFactory(),
    logger: options.logger,
    ackTimeoutMs: options.ackTimeoutMs ?? 20_000,
    uploadTimeoutMs: options.uploadTimeoutMs ?? 60_000,
    nativeInteractive: options.nativeInteractive ?? false,
    historyDays: options.historyDays ?? 0,
    preKeys: options.preKeysAtPairing ?? INITIAL_PREKEY_COUNT,
    writes: new SessionWrites(),
  };
  // Signal session records (keys) printed by the libraries must never reach the console or the logs.
  const releaseConsole = captureLibraryConsole(options.logger);
  const retentionMs = options.sentRetentionMs ?? 14 * DAY_MS;
  let pruning = Promise.resolve();
  const prune = async (): Promise<void> => {
    try {
      const before = Date.now() - retentionMs;
      while ((await options.states.pruneSent(before, PRUNE_BATCH)) === PRUNE_BATCH) {
        // More may be left: another batch, after yielding to other work.
        await new Promise((resolve) => setImmediate(resolve));
      }
      const expired = Date.now() - OFFER_TTL_MS;
      while ((await options.states.pruneOffers(expired, PRUNE_BATCH)) === PRUNE_BATCH) {
        await new Promise((resolve) => setImmediate(resolve));
      }
    } catch (error) {
      options.logger.warn({ err: error }, 'deleting old sent-message records or offers failed; will try again');
    }
  };
  const pruneTimer = setInterval(
    () => {
      pruning = pruning.then(prune);
    },
    options.pruneIntervalMs ?? 60 * 60 * 1000,
  );
  pruneTimer.unref();
  return {
    description: `WhatsApp (${WHATSAPP_LIBRARY})${deps.nativeInteractive ? ', native interactive messages (experimental)' : ''}`,
    connect(connectOptions, onEvent) {
      const connection: WhatsAppConnection = new WhatsAppConnection(
        connectOptions,
        (event) => {
          if (event.type === 'disconnected' || event.type === 'logged_out') open.delete(connection);
          onEvent(event);
        },
        deps,
      );
      open.add(connection);
      return connection;
    },
    async close() {
      clearInterval(pruneTimer);
      releaseConsole();
      for (const connection of open) connection.close();
      open.clear();
      await pruning;
    },
  };
}

export { resealSession } from './auth-state.js';
export { UnreadableStateError } from './seal.js';
export { realSocketFactory } from './socket-port.js';
