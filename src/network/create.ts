/**
 * Chooses the network implementation from the configuration (DECISIONS 8, 10).
 *
 * Owns: the only place that knows which networks exist, and which accounts'
 * devices are on the sandbox (every account when the sandbox is the network;
 * only sandbox accounts beside WhatsApp, through the router). Everything else
 * gets a `Network` and asks it for capabilities (e.g. `network.sandbox`).
 */
import { join } from 'node:path';
import { ConfigError, type Config } from '../config.js';
import type { Network } from './network.js';
import type { Logger } from 'pino';
import { connectSandboxNetwork, createSandboxNetwork, type SandboxOptions } from './sandbox/index.js';
import type { NetworkStateStore } from './state.js';
import { createNetworkRouter } from './router.js';
import { createWhatsAppNetwork } from './whatsapp/index.js';
import { realSocketFactory } from './whatsapp/socket-port.js';

/** What a network may need from the gateway: where to keep its state, where to log, where a device belongs. */
export interface NetworkHost {
  readonly states: NetworkStateStore;
  readonly logger: Logger;
  /** Whether the device belongs to a sandbox account (asked once per connection, beside a real network only). */
  readonly onSandbox: (deviceId: number) => Promise<boolean>;
}

/**
 * Which accounts' devices live on the sandbox: `every-account` when the sandbox is the gateway's network,
 * `sandbox-accounts` (those created with `--sandbox`) when the gateway runs WhatsApp beside it.
 */
export type SandboxScope = 'every-account' | 'sandbox-accounts';

export function sandboxScope(config: Pick<Config, 'network'>): SandboxScope {
  return config.network === 'whatsapp' ? 'sandbox-accounts' : 'every-account';
}

export function createNetwork(config: Config, host: NetworkHost, sandboxOptions: SandboxOptions = {}): Network {
  // The in-process sandbox keeps its phones, groups and sessions next to the store, so paired devices survive a restart.
  const inProcessSandbox = () =>
    createSandboxNetwork({ statePath: join(config.dataDir, 'sandbox-state.json'), ...sandboxOptions });
  if (config.network === 'sandbox') return inProcessSandbox();
  if (config.network.startsWith('sandbox+')) {
    return connectSandboxNetwork(config.network.slice('sandbox+'.length));
  }
  if (config.network === 'whatsapp') {
    // loadConfig refuses whatsapp without a key; this only guards a hand-built Config.
    if (config.networkKey === null)
      throw new ConfigError('GATEWAY_NETWORK_KEY is required with GATEWAY_NETWORK=whatsapp');
    const whatsapp = createWhatsAppNetwork({
      states: host.states,
      keys: config.networkKey,
      logger: host.logger,
      nativeInteractive: config.whatsappNativeInteractive,
      factory: realSocketFactory({
        ...(config.whatsappUrl === null ? {} : { url: config.whatsappUrl }),
        ...(config.whatsappRootKey === null ? {} : { rootKey: config.whatsappRootKey }),
      }),
    });
    // Sandbox accounts beside the real network (DECISIONS 10): one gateway runs both at once.
    return createNetworkRouter({ primary: whatsapp, sandbox: inProcessSandbox(), onSandbox: host.onSandbox });
  }
  throw new ConfigError(`GATEWAY_NETWORK=${config.network} is not a network this gateway knows`);
}
