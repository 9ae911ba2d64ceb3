/**
 * Chooses the network implementation from the configuration (DECISIONS 8).
 *
 * Owns: the only place that knows which networks exist. Everything else gets
 * a `Network` and asks it for capabilities (e.g. `network.sandbox`).
 */
import { join } from 'node:path';
import { ConfigError, type Config } from '../config.js';
import type { Network } from './network.js';
import { connectSandboxNetwork, createSandboxNetwork, type SandboxOptions } from './sandbox/index.js';

export function createNetwork(config: Config, sandboxOptions: SandboxOptions = {}): Network {
  if (config.network === 'sandbox') {
    // The in-process sandbox keeps its phones, groups and sessions next to the store, so paired devices survive a restart.
    return createSandboxNetwork({ statePath: join(config.dataDir, 'sandbox-state.json'), ...sandboxOptions });
  }
  if (config.network.startsWith('sandbox+')) {
    return connectSandboxNetwork(config.network.slice('sandbox+'.length));
  }
  throw new ConfigError(
    `GATEWAY_NETWORK=${config.network}: the real-network connector is not part of this build yet; use "sandbox" or "sandbox+ws://host:port"`,
  );
}
