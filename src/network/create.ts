/**
 * Chooses the network implementations from the configuration (docs/internals.md, The network seam and the sandbox; docs/internals.md, WhatsApp and sandbox accounts; docs/networks-per-device.md).
 *
 * Owns: the only place that knows which networks exist. The sandbox always
 * runs (sandbox accounts, and devices paired on it before GATEWAY_NETWORK
 * changed); WhatsApp runs beside it when configured; the router sends each
 * device's connection to its own (the rule: src/devices/networks.ts).
 * Everything else gets a `Network` and asks it for capabilities (e.g.
 * `network.sandbox`).
 */
import { join } from 'node:path';
import { ConfigError, type Config } from '../config.js';
import type { Network, NetworkName } from './network.js';
import type { Logger } from 'pino';
import { connectSandboxNetwork, createSandboxNetwork, type SandboxOptions } from './sandbox/index.js';
import type { NetworkStateStore } from './state.js';
import { createNetworkRouter } from './router.js';
import type * as WhatsAppModule from './whatsapp/index.js';

/**
 * The WhatsApp connector, loaded only when the gateway runs WhatsApp (`loadWhatsApp`): it brings the WhatsApp
 * library, about a second of start-up and its memory, which a gateway on the sandbox alone never needs.
 */
export type WhatsAppConnector = Pick<typeof WhatsAppModule, 'createWhatsAppNetwork' | 'realSocketFactory'>;

export async function loadWhatsApp(config: Pick<Config, 'network'>): Promise<WhatsAppConnector | null> {
  return config.network === 'whatsapp' ? await import('./whatsapp/index.js') : null;
}

/** What a network may need from the gateway: where to keep its state, where to log, where a device belongs. */
export interface NetworkHost {
  readonly states: NetworkStateStore;
  readonly logger: Logger;
  /** Which network a connection of the device goes to (asked once per connection; see DeviceNetworks). */
  readonly networkOf: (deviceId: number, pairing: boolean) => Promise<NetworkName>;
}

/**
 * Which accounts' devices live on the sandbox: `every-account` when the sandbox is the gateway's network,
 * `sandbox-accounts` (those created with `--sandbox`) when the gateway runs WhatsApp beside it.
 */
export type SandboxScope = 'every-account' | 'sandbox-accounts';

export function sandboxScope(config: Pick<Config, 'network'>): SandboxScope {
  return config.network === 'whatsapp' ? 'sandbox-accounts' : 'every-account';
}

export function createNetwork(
  config: Config,
  host: NetworkHost,
  connector: WhatsAppConnector | null,
  sandboxOptions: SandboxOptions = {},
): Network {
  // The in-process sandbox keeps its phones, groups and sessions next to the store, so paired devices survive a restart.
  const inProcessSandbox = () =>
    createSandboxNetwork({ statePath: join(config.dataDir, 'sandbox-state.json'), ...sandboxOptions });
  const router = (sandbox: ReturnType<typeof inProcessSandbox>, whatsapp: Network | null) =>
    createNetworkRouter({ sandbox, whatsapp, networkOf: host.networkOf });
  // Devices paired on WhatsApp stay paired while the gateway runs the sandbox alone (docs/networks-per-device.md): the router
  // holds them unconnected instead of handing their sessions to the sandbox, which would log them out.
  if (config.network === 'sandbox') return router(inProcessSandbox(), null);
  if (config.network.startsWith('sandbox+')) {
    return router(connectSandboxNetwork(config.network.slice('sandbox+'.length)), null);
  }
  if (config.network === 'whatsapp') {
    // loadConfig refuses whatsapp without a key; this only guards a hand-built Config.
    if (config.networkKey === null)
      throw new ConfigError('GATEWAY_NETWORK_KEY is required with GATEWAY_NETWORK=whatsapp');
    if (connector === null) throw new Error('the WhatsApp connector was not loaded (loadWhatsApp)');
    const { createWhatsAppNetwork, realSocketFactory } = connector;
    const whatsapp = createWhatsAppNetwork({
      states: host.states,
      keys: config.networkKey,
      logger: host.logger,
      nativeInteractive: config.whatsappNativeInteractive,
      ackTimeoutMs: config.whatsappAckTimeoutMs,
      uploadTimeoutMs: config.whatsappUploadTimeoutMs,
      historyDays: config.historyDays,
      factory: realSocketFactory({
        history: config.historyDays > 0,
        ...(config.whatsappUrl === null ? {} : { url: config.whatsappUrl }),
        ...(config.whatsappRootKey === null ? {} : { rootKey: config.whatsappRootKey }),
        ...(config.whatsappVersion === undefined ? {} : { version: config.whatsappVersion }),
      }),
    });
    // Sandbox accounts, and devices paired on the sandbox, beside the real network: one gateway runs both at once.
    return router(inProcessSandbox(), whatsapp);
  }
  throw new ConfigError(`GATEWAY_NETWORK=${config.network} is not a network this gateway knows`);
}
