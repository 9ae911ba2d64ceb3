/**
 * The WhatsApp network (DECISIONS 10): the seam's `Network` over Baileys
 * 7.0.0-rc14, with each device's state in the gateway's store, sealed.
 *
 * Owns: making connections and what they share (the sealer, the state port,
 * the socket factory, the library's logger). Everything WhatsApp-specific
 * stays inside this folder.
 * Must never: hold state of its own beyond the open connections.
 */
import type { Logger } from 'pino';
import type { NetworkKeys } from '../../config.js';
import type { Network } from '../network.js';
import type { NetworkStateStore } from '../state.js';
import { WhatsAppConnection } from './connection.js';
import { Sealer } from './seal.js';
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
}

export function createWhatsAppNetwork(options: WhatsAppNetworkOptions): Network {
  const sealer = new Sealer(options.keys);
  const open = new Set<WhatsAppConnection>();
  const deps = {
    states: options.states,
    sealer,
    factory: options.factory ?? realSocketFactory(),
    logger: options.logger,
    ackTimeoutMs: options.ackTimeoutMs ?? 20_000,
  };
  return {
    description: `WhatsApp (${WHATSAPP_LIBRARY})`,
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
      for (const connection of open) connection.close();
      open.clear();
    },
  };
}

export { resealSession } from './auth-state.js';
export { UnreadableStateError } from './seal.js';
