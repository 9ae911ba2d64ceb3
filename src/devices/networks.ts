/**
 * Which network each device is on (docs/internals.md, WhatsApp and sandbox accounts; docs/networks-per-device.md).
 *
 * Owns: the one rule, used by the network router, the pairing write, the
 * device object and the start-up log. A paired device is on the network it
 * paired on (`devices.network`), whatever GATEWAY_NETWORK says now; a device
 * that is not paired pairs on its account's network: the sandbox for sandbox
 * accounts and whenever the sandbox is the gateway's network, otherwise the
 * configured one. So restarting with another GATEWAY_NETWORK never logs a
 * device out: it stays where it paired until it is logged out or paired again.
 * Must never: move a paired device (its session belongs to one network), or
 * decide anything about connections beyond naming the network.
 */
import type { Config } from '../config.js';
import { accountsRepository } from '../accounts/repository.js';
import { devicesRepository } from './repository.js';
import type { Store } from '../store/store.js';
import type { Db } from '../store/schema.js';
import type { NetworkName } from '../network/network.js';

export type { NetworkName } from '../network/network.js';

/** The network GATEWAY_NETWORK runs for accounts that are not sandbox accounts (`sandbox+ws://` is the sandbox). */
export function configuredNetwork(config: Pick<Config, 'network'>): NetworkName {
  return config.network === 'whatsapp' ? 'whatsapp' : 'sandbox';
}

/** A stored network name, or null for none (or one this gateway does not know: the account's rule applies). */
function stored(value: string | null): NetworkName | null {
  return value === 'sandbox' || value === 'whatsapp' ? value : null;
}

/** What the rule reads of a device row. */
export interface DeviceNetworkFacts {
  readonly account_id: number;
  readonly paired_status: string;
  readonly network: string | null;
}

/** A device that stays on another network than its account's (listed at start-up, marked in the dashboard). */
export interface KeptDevice {
  readonly id: number;
  readonly name: string;
  readonly network: NetworkName;
}

/** How many accounts' networks are remembered: an account's sandbox flag never changes, so they never go stale. */
const ACCOUNT_CACHE_MAX = 10_000;

export class DeviceNetworks {
  private readonly sandboxAccounts = new Map<number, boolean>();

  constructor(
    private readonly store: Store,
    /** The network of accounts that are not sandbox accounts. */
    readonly configured: NetworkName,
  ) {}

  /** Where an account's devices pair (docs/internals.md, WhatsApp and sandbox accounts: sandbox accounts always on the sandbox). */
  async ofAccount(accountId: number, db: Db = this.store.db): Promise<NetworkName> {
    if (this.configured === 'sandbox') return 'sandbox';
    let sandbox = this.sandboxAccounts.get(accountId);
    if (sandbox === undefined) {
      sandbox = (await accountsRepository.findById(db, accountId))?.sandbox === true;
      if (this.sandboxAccounts.size >= ACCOUNT_CACHE_MAX) this.sandboxAccounts.clear();
      this.sandboxAccounts.set(accountId, sandbox);
    }
    return sandbox ? 'sandbox' : this.configured;
  }

  /** The rule itself: a paired device's own network, otherwise its account's. */
  static decide(device: DeviceNetworkFacts, accountNetwork: NetworkName): NetworkName {
    return device.paired_status === 'PAIRED' ? (stored(device.network) ?? accountNetwork) : accountNetwork;
  }

  async ofDevice(device: DeviceNetworkFacts): Promise<NetworkName> {
    return DeviceNetworks.decide(device, await this.ofAccount(device.account_id));
  }

  /**
   * Where a connection of the device goes: a pairing attempt (no session) to the account's network, a stored
   * session to the network that issued it. Undefined device (deleted meanwhile): the configured network.
   */
  async forConnection(deviceId: number, pairing: boolean): Promise<NetworkName> {
    const device = await devicesRepository.findById(this.store.db, deviceId);
    if (device === undefined) return this.configured;
    const accountNetwork = await this.ofAccount(device.account_id);
    return pairing ? accountNetwork : DeviceNetworks.decide(device, accountNetwork);
  }

  /** Paired devices kept on another network than the one their account pairs on now. */
  async kept(): Promise<KeptDevice[]> {
    const rows = await devicesRepository.pairedWithNetwork(this.store.db);
    const kept: KeptDevice[] = [];
    for (const row of rows) {
      const own = stored(row.network);
      if (own !== null && own !== (await this.ofAccount(row.account_id))) {
        kept.push({ id: row.id, name: row.name, network: own });
      }
    }
    return kept;
  }
}
