/**
 * Chooses the network implementation from the configuration (DECISIONS 8).
 *
 * Owns: the only place that knows which networks exist. Everything else gets
 * a `Network` and asks it for capabilities (e.g. `network.sandbox`).
 */
import { join } from 'node:path';
import { ConfigError, type Config } from '../config.js';
import type { Network } from './network.js';
import type { Logger } from 'pino';
import { connectSandboxNetwork, createSandboxNetwork, type SandboxOptions } from './sandbox/index.js';
import type { NetworkStateStore } from './state.js';
import { createWhatsAppNetwork } from './whatsapp/index.js';
import { realSocketFactory } from './whatsapp/socket-port.js';

/** What a network may need from the gateway: where to keep its state, and where to log. */
export interface NetworkHost {
  readonly states: NetworkStateStore;
  readonly logger: Logger;
}

export function createNetwork(config: Config, host: NetworkHost, sandboxOptions: SandboxOptions = {}): Network {
  if (config.network === 'sandbox') {
    // The in-process sandbox keeps its phones, groups and sessions next to the store, so paired devices survive a restart.
    return createSandboxNetwork({ statePath: join(config.dataDir, 'sandbox-state.json'), ...sandboxOptions });
  }
  if (config.network.startsWith('sandbox+')) {
    return connectSandboxNetwork(config.network.slice('sandbox+'.length));
  }
  if (config.network === 'whatsapp') {
    // loadConfig refuses whatsapp without a key; this only guards a hand-built Config.
    if (config.networkKey === null)
      throw new ConfigError('GATEWAY_NETWORK_KEY is required with GATEWAY_NETWORK=whatsapp');
    return createWhatsAppNetwork({
      states: host.states,
      keys: config.networkKey,
      logger: host.logger,
      factory: realSocketFactory(config.whatsappUrl === null ? {} : { url: config.whatsappUrl }),
    });
  }
  throw new ConfigError(`GATEWAY_NETWORK=${config.network} is not a network this gateway knows`);
}
