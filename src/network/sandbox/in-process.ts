/**
 * The sandbox inside the gateway process: a Network over one SandboxWorld.
 *
 * Owns: turning the world's synchronous calls into the promise-based network
 * interface and delivering events on a later microtask. Must never: call the
 * gateway's handler synchronously from inside one of the gateway's own calls
 * (re-entrancy surprises), or after the gateway closed the connection.
 */
import type { ConnectOptions, Network, NetworkConnection, NetworkEvent, NetworkEventHandler } from '../network.js';
import type { SandboxControl } from '../sandbox-control.js';
import { digestMessage } from './media-digest.js';
import { downloadSandboxMedia } from './media-download.js';
import type { SandboxLink, SandboxOptions } from './world.js';
import { SandboxWorld } from './world.js';

/** Runs a synchronous world call so that its exceptions become rejections. */
function settle<T>(fn: () => T): Promise<T> {
  try {
    return Promise.resolve(fn());
  } catch (err) {
    return Promise.reject(err as Error);
  }
}

class InProcessConnection implements NetworkConnection {
  private quiet = false;
  private readonly link: SandboxLink;

  constructor(world: SandboxWorld, options: ConnectOptions, onEvent: NetworkEventHandler) {
    this.link = world.connect(options, (event) => queueMicrotask(() => this.deliver(onEvent, event)));
  }

  private deliver(onEvent: NetworkEventHandler, event: NetworkEvent): void {
    if (this.quiet) return;
    try {
      onEvent(event);
    } catch (err) {
      console.error('sandbox: event handler failed: %s', (err as Error).message);
    }
  }

  // Media is read through (chunk by chunk, into a digest) before the world takes the message.
  sendMessage: NetworkConnection['sendMessage'] = async (message) => {
    const digested = await digestMessage(message);
    return settle(() => this.link.sendMessage(digested));
  };
  sendTyping: NetworkConnection['sendTyping'] = (to, ms) => settle(() => this.link.sendTyping(to, ms));
  sendPresence: NetworkConnection['sendPresence'] = (state, to) => settle(() => this.link.sendPresence(state, to));
  listGroups: NetworkConnection['listGroups'] = () => settle(() => this.link.listGroups());
  getGroup: NetworkConnection['getGroup'] = (id) => settle(() => this.link.getGroup(id));
  createGroup: NetworkConnection['createGroup'] = (subject, phones) =>
    settle(() => this.link.createGroup(subject, phones));
  addParticipants: NetworkConnection['addParticipants'] = (id, phones) =>
    settle(() => this.link.addParticipants(id, phones));
  updateGroup: NetworkConnection['updateGroup'] = (id, changes) => settle(() => this.link.updateGroup(id, changes));
  changeParticipants: NetworkConnection['changeParticipants'] = (id, phones, action) =>
    settle(() => this.link.changeParticipants(id, phones, action));
  groupInvite: NetworkConnection['groupInvite'] = (id, revoke) => settle(() => this.link.groupInvite(id, revoke));
  joinGroup: NetworkConnection['joinGroup'] = (code) => settle(() => this.link.joinGroup(code));
  leaveGroup: NetworkConnection['leaveGroup'] = (id) => settle(() => this.link.leaveGroup(id));
  rejectCall: NetworkConnection['rejectCall'] = (call) => settle(() => this.link.rejectCall(call));
  checkNumbers: NetworkConnection['checkNumbers'] = (phones) => settle(() => this.link.checkNumbers(phones));
  modifyChat: NetworkConnection['modifyChat'] = (chat, change, last) =>
    settle(() => this.link.modifyChat(chat, change, last));
  listContacts: NetworkConnection['listContacts'] = () => settle(() => this.link.listContacts());
  getContact: NetworkConnection['getContact'] = (phone) => settle(() => this.link.getContact(phone));
  setBlocked: NetworkConnection['setBlocked'] = (phone, on) => settle(() => this.link.setBlocked(phone, on));
  listBlocked: NetworkConnection['listBlocked'] = () => settle(() => this.link.listBlocked());
  getProfile: NetworkConnection['getProfile'] = () => settle(() => this.link.getProfile());
  updateProfile: NetworkConnection['updateProfile'] = (changes) => settle(() => this.link.updateProfile(changes));
  setGroupPicture: NetworkConnection['setGroupPicture'] = (id, picture) =>
    settle(() => this.link.setGroupPicture(id, picture));
  downloadMedia: NonNullable<NetworkConnection['downloadMedia']> = (media) => downloadSandboxMedia(media);
  logout: NetworkConnection['logout'] = () => settle(() => this.link.logout());
  requestPairingCode: NetworkConnection['requestPairingCode'] = (phone) =>
    settle(() => this.link.requestPairingCode(phone));

  close(): void {
    this.quiet = true;
    this.link.close();
  }
}

/** The control API over a world, as promises (shared by the in-process network and nothing else). */
export function controlOf(world: SandboxWorld): SandboxControl {
  return {
    scan: (qr, phone, scope) => settle(() => world.scan(qr, phone, scope)),
    pair: (code, phone, scope) => settle(() => world.pair(code, phone, scope)),
    upsertPhone: (settings, view) => settle(() => world.upsertPhone(settings, view)),
    getPhone: (phone, view) => settle(() => world.getPhone(phone, view)),
    sendFromPhone: (phone, to, text, recipient, view) =>
      settle(() => world.sendFromPhone(phone, to, text, recipient, view)),
    changeFromPhone: (phone, change, recipient, view) =>
      settle(() => world.changeFromPhone(phone, change, recipient, view)),
    callFromPhone: (phone, call, recipient, view) => settle(() => world.callFromPhone(phone, call, recipient, view)),
    changeChatOnPhone: (phone, chat, change, recipient, view) =>
      settle(() => world.changeChatOnPhone(phone, chat, change, recipient, view)),
    seedHistory: (phone, to, messages, view) => settle(() => world.seedHistory(phone, to, messages, view)),
    readMessage: (phone, messageId, view) => settle(() => world.readMessage(phone, messageId, view)),
    createGroup: (name, members, view) => settle(() => world.createGroup(name, members, view)),
    changeGroupFromPhone: (phone, groupId, change, view) =>
      settle(() => world.changeGroupFromPhone(phone, groupId, change, view)),
    disconnectDevice: (deviceId, options) => settle(() => world.disconnectDevice(deviceId, options)),
  };
}

export function createSandboxNetwork(options: SandboxOptions = {}): Network & { readonly sandbox: SandboxControl } {
  const world = new SandboxWorld(options);
  return {
    description: 'sandbox (simulated network, in-process)',
    connect: (connectOptions, onEvent) => new InProcessConnection(world, connectOptions, onEvent),
    sandbox: controlOf(world),
    close: async () => world.close(),
  };
}
