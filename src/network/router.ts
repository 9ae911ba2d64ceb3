/**
 * One gateway, two networks at once (docs/internals.md, WhatsApp and sandbox accounts): the devices of sandbox
 * accounts live on the sandbox while every other device is on the real network.
 *
 * Owns: choosing, once per connection, which network a device's connection
 * goes to, by asking the gateway where the device belongs (the `onSandbox`
 * port, one lookup of the device's account); then passing every call of that
 * connection to the chosen network and every event back unchanged, so the
 * gateway's services and event handlers never learn there are two.
 * Must never: read the store itself, change a call or an event, or move a
 * connection between networks once chosen (a device's session belongs to the
 * network it paired on).
 */
import {
  NetworkUnavailableError,
  type ConnectionCapabilities,
  type ConnectOptions,
  type Network,
  type NetworkConnection,
  type NetworkEventHandler,
} from './network.js';
import type { SandboxControl } from './sandbox/control.js';

export interface NetworkRouterOptions {
  /** The gateway's configured network, for every device not on the sandbox. */
  readonly primary: Network;
  /** The sandbox, for the devices of sandbox accounts; its control API is the router's. */
  readonly sandbox: Network & { readonly sandbox: SandboxControl };
  /**
   * Whether the device's connections go to the sandbox. A rejection (the store cannot be reached) ends that
   * connection attempt as a drop, which the gateway retries with its usual backoff.
   */
  readonly onSandbox: (deviceId: number) => Promise<boolean>;
}

/** A connection whose network is known once the lookup answers; calls made before then wait for it. */
class RoutedConnection implements NetworkConnection {
  private inner: NetworkConnection | null = null;
  private closed = false;
  private readonly ready: Promise<NetworkConnection | null>;

  constructor(router: NetworkRouterOptions, options: ConnectOptions, onEvent: NetworkEventHandler) {
    this.ready = router.onSandbox(options.deviceId).then(
      (onSandbox) => {
        if (this.closed) return null;
        this.inner = (onSandbox ? router.sandbox : router.primary).connect(options, onEvent);
        return this.inner;
      },
      (error: unknown) => {
        if (!this.closed) {
          const detail = error instanceof Error ? error.message : String(error);
          onEvent({ type: 'disconnected', reason: `could not tell which network the device is on: ${detail}` });
        }
        return null;
      },
    );
  }

  private async target(): Promise<NetworkConnection> {
    const inner = this.inner ?? (await this.ready);
    if (inner === null || this.closed) throw new NetworkUnavailableError();
    return inner;
  }

  /** The chosen connection's, once the lookup answered (a send waits for it, so what it delivered is known). */
  get capabilities(): ConnectionCapabilities | undefined {
    return this.inner?.capabilities;
  }

  /** The chosen connection's background writes (none when the lookup never chose one). */
  async settled(): Promise<void> {
    const inner = this.inner ?? (await this.ready);
    await inner?.settled?.();
  }

  sendMessage: NetworkConnection['sendMessage'] = async (message) => (await this.target()).sendMessage(message);
  sendTyping: NetworkConnection['sendTyping'] = async (to, ms) => (await this.target()).sendTyping(to, ms);
  listGroups: NetworkConnection['listGroups'] = async () => (await this.target()).listGroups();
  getGroup: NetworkConnection['getGroup'] = async (id) => (await this.target()).getGroup(id);
  createGroup: NetworkConnection['createGroup'] = async (subject, phones) =>
    (await this.target()).createGroup(subject, phones);
  addParticipants: NetworkConnection['addParticipants'] = async (id, phones) =>
    (await this.target()).addParticipants(id, phones);
  updateGroup: NetworkConnection['updateGroup'] = async (id, changes) => (await this.target()).updateGroup(id, changes);
  checkNumbers: NetworkConnection['checkNumbers'] = async (phones) => (await this.target()).checkNumbers(phones);
  requestPairingCode: NetworkConnection['requestPairingCode'] = async (phone) =>
    (await this.target()).requestPairingCode(phone);
  logout: NetworkConnection['logout'] = async () => (await this.target()).logout();

  close(): void {
    this.closed = true;
    this.inner?.close();
  }
}

/** A network that runs `primary` and the sandbox side by side, each device on the one its account chose. */
export function createNetworkRouter(options: NetworkRouterOptions): Network & { readonly sandbox: SandboxControl } {
  return {
    description: `${options.primary.description}; sandbox accounts on ${options.sandbox.description}`,
    connect: (connectOptions, onEvent) => new RoutedConnection(options, connectOptions, onEvent),
    sandbox: options.sandbox.sandbox,
    close: async () => {
      // Both close even when one fails; the first failure is reported.
      const results = await Promise.allSettled([options.primary.close(), options.sandbox.close()]);
      const failed = results.find((result): result is PromiseRejectedResult => result.status === 'rejected');
      if (failed !== undefined) throw failed.reason;
    },
  };
}
