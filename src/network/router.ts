/**
 * Which network each device's connection goes to (docs/internals.md, WhatsApp and sandbox accounts; docs/networks-per-device.md): the
 * sandbox and, beside it, the configured real network, at once. Devices of
 * sandbox accounts pair on the sandbox; a paired device stays on the network
 * it paired on, whatever GATEWAY_NETWORK says now.
 *
 * Owns: asking the gateway, once per connection, which network the device's
 * connection goes to (the `networkOf` port: src/devices/networks.ts holds the
 * rule); then passing every call of that connection to the chosen network and
 * every event back unchanged, so the gateway's services and event handlers
 * never learn there are two. A device on a network this gateway does not run
 * (paired on WhatsApp, started with the sandbox) gets a connection that
 * reports itself unavailable and is retried rarely: never logged out.
 * Must never: read the store itself, change a call or an event, or move a
 * connection between networks once chosen (a device's session belongs to the
 * network it paired on).
 */
import {
  NetworkMediaError,
  NetworkUnavailableError,
  type ConnectionCapabilities,
  type ConnectOptions,
  type Network,
  type NetworkConnection,
  type NetworkEventHandler,
  type NetworkName,
} from './network.js';
import type { SandboxControl } from './sandbox-control.js';

export interface NetworkRouterOptions {
  /** The sandbox: always run, for sandbox accounts and devices paired on it; its control API is the router's. */
  readonly sandbox: Network & { readonly sandbox: SandboxControl };
  /** The real network, when GATEWAY_NETWORK names one. */
  readonly whatsapp: Network | null;
  /**
   * Which network the device's connection goes to: a pairing attempt (no session) or a stored session. A
   * rejection (the store cannot be reached) ends that attempt as a drop, which the gateway retries with its
   * usual backoff.
   */
  readonly networkOf: (deviceId: number, pairing: boolean) => Promise<NetworkName>;
}

/** A connection to a network this gateway does not run: it says so once and is retried no sooner than `absent`. */
function absentConnection(name: NetworkName, onEvent: NetworkEventHandler): NetworkConnection {
  const refuse = async (): Promise<never> => {
    throw new NetworkUnavailableError();
  };
  let closed = false;
  queueMicrotask(() => {
    if (closed) return;
    onEvent({
      type: 'disconnected',
      reason: `paired on ${name}, which this gateway does not run (see GATEWAY_NETWORK)`,
      retry: 'absent',
    });
  });
  return {
    sendMessage: refuse,
    sendTyping: refuse,
    sendPresence: refuse,
    listGroups: refuse,
    getGroup: refuse,
    createGroup: refuse,
    addParticipants: refuse,
    updateGroup: refuse,
    changeParticipants: refuse,
    groupInvite: refuse,
    joinGroup: refuse,
    leaveGroup: refuse,
    modifyChat: refuse,
    rejectCall: refuse,
    checkNumbers: refuse,
    requestPairingCode: refuse,
    logout: refuse,
    close: () => {
      closed = true;
    },
  };
}

/** A connection whose network is known once the lookup answers; calls made before then wait for it. */
class RoutedConnection implements NetworkConnection {
  private inner: NetworkConnection | null = null;
  private closed = false;
  private readonly ready: Promise<NetworkConnection | null>;

  constructor(router: NetworkRouterOptions, options: ConnectOptions, onEvent: NetworkEventHandler) {
    this.ready = router.networkOf(options.deviceId, options.session === null).then(
      (name) => {
        if (this.closed) return null;
        const network = name === 'sandbox' ? router.sandbox : router.whatsapp;
        this.inner = network === null ? absentConnection(name, onEvent) : network.connect(options, onEvent);
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
  sendPresence: NetworkConnection['sendPresence'] = async (state, to) => (await this.target()).sendPresence(state, to);
  listGroups: NetworkConnection['listGroups'] = async () => (await this.target()).listGroups();
  getGroup: NetworkConnection['getGroup'] = async (id) => (await this.target()).getGroup(id);
  createGroup: NetworkConnection['createGroup'] = async (subject, phones) =>
    (await this.target()).createGroup(subject, phones);
  addParticipants: NetworkConnection['addParticipants'] = async (id, phones) =>
    (await this.target()).addParticipants(id, phones);
  updateGroup: NetworkConnection['updateGroup'] = async (id, changes) => (await this.target()).updateGroup(id, changes);
  changeParticipants: NetworkConnection['changeParticipants'] = async (id, phones, action) =>
    (await this.target()).changeParticipants(id, phones, action);
  groupInvite: NetworkConnection['groupInvite'] = async (id, revoke) => (await this.target()).groupInvite(id, revoke);
  joinGroup: NetworkConnection['joinGroup'] = async (code) => (await this.target()).joinGroup(code);
  leaveGroup: NetworkConnection['leaveGroup'] = async (id) => (await this.target()).leaveGroup(id);
  rejectCall: NetworkConnection['rejectCall'] = async (call) => (await this.target()).rejectCall(call);
  checkNumbers: NetworkConnection['checkNumbers'] = async (phones) => (await this.target()).checkNumbers(phones);
  modifyChat: NetworkConnection['modifyChat'] = async (chat, change, last) =>
    (await this.target()).modifyChat(chat, change, last);
  downloadMedia: NonNullable<NetworkConnection['downloadMedia']> = async (media) => {
    const inner = await this.target();
    if (inner.downloadMedia === undefined)
      throw new NetworkMediaError('this network has no media to download', 'permanent');
    return inner.downloadMedia(media);
  };
  requestPairingCode: NetworkConnection['requestPairingCode'] = async (phone) =>
    (await this.target()).requestPairingCode(phone);
  logout: NetworkConnection['logout'] = async () => (await this.target()).logout();

  close(): void {
    this.closed = true;
    this.inner?.close();
  }
}

/** A network that runs the sandbox and, when configured, WhatsApp side by side, each device on its own. */
export function createNetworkRouter(options: NetworkRouterOptions): Network & { readonly sandbox: SandboxControl } {
  const { sandbox, whatsapp } = options;
  return {
    description:
      whatsapp === null
        ? sandbox.description
        : `${whatsapp.description}; sandbox accounts and devices paired on the sandbox on ${sandbox.description}`,
    connect: (connectOptions, onEvent) => new RoutedConnection(options, connectOptions, onEvent),
    sandbox: sandbox.sandbox,
    close: async () => {
      // Both close even when one fails; the first failure is reported.
      const results = await Promise.allSettled([whatsapp?.close(), sandbox.close()]);
      const failed = results.find((result): result is PromiseRejectedResult => result.status === 'rejected');
      if (failed !== undefined) throw failed.reason;
    },
  };
}
