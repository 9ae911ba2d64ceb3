/**
 * The simulated messaging network: one SandboxWorld holds every phone,
 * session, pairing attempt, group and device connection.
 *
 * Owns: the synchronous facade that both adapters (in-process and the
 * WebSocket server) drive, so the same world code runs either way. Must
 * never: know about transports, promises or the gateway's own state; errors
 * are thrown as the network interface's error classes or SandboxControlError.
 */
import type {
  AddressBookEntry,
  ContactProfile,
  OwnProfile,
  PictureUpload,
  ProfileChanges,
  AddParticipantOutcome,
  ChatChange,
  ChatLastMessage,
  ConnectOptions,
  CreatedNetworkGroup,
  GroupChanges,
  IncomingCall,
  NetworkEventHandler,
  NetworkGroup,
  NetworkGroupId,
  ParticipantAction,
  ParticipantChangeOutcome,
  PhoneNumber,
  PresenceState,
} from '../network.js';
import type {
  PhoneMessage,
  RecipientScope,
  SandboxCall,
  SandboxGroupChange,
  SandboxPhone,
  SandboxChatChange,
  SandboxChatSettings,
  SandboxPhoneChange,
  SandboxPhoneSettings,
  ScanScope,
} from '../sandbox-control.js';
import * as calls from './calls.js';
import * as chats from './chats.js';
import * as history from './history.js';
import type { SeedMessage } from './history.js';
import * as contacts from './contacts.js';
import { changeFromPhone } from './changes.js';
import * as admin from './group-admin.js';
import * as groups from './groups.js';
import type { SandboxMessage } from './media-digest.js';
import * as messaging from './messaging.js';
import * as pairing from './pairing.js';
import { viewOf } from './phones.js';
import { sendPresence } from './presence.js';
import type { SandboxOptions } from './state.js';
import { WorldState } from './state.js';

export type { SandboxOptions } from './state.js';

/** One device connection as the world sees it: NetworkConnection's operations, synchronous. */
export interface SandboxLink {
  /** Media arrives already digested: the transport read the bytes (the world never sees them). */
  sendMessage(message: SandboxMessage): void;
  sendTyping(to: PhoneNumber | NetworkGroupId, durationMs: number): void;
  sendPresence(state: PresenceState, to?: PhoneNumber | NetworkGroupId): void;
  listGroups(): NetworkGroup[];
  getGroup(groupId: NetworkGroupId): NetworkGroup;
  createGroup(subject: string, participants: ReadonlyArray<PhoneNumber>): CreatedNetworkGroup;
  addParticipants(groupId: NetworkGroupId, phones: ReadonlyArray<PhoneNumber>): AddParticipantOutcome[];
  updateGroup(groupId: NetworkGroupId, changes: GroupChanges): NetworkGroup;
  changeParticipants(
    groupId: NetworkGroupId,
    phones: ReadonlyArray<PhoneNumber>,
    action: ParticipantAction,
  ): ParticipantChangeOutcome[];
  groupInvite(groupId: NetworkGroupId, revoke: boolean): string;
  joinGroup(code: string): NetworkGroup;
  leaveGroup(groupId: NetworkGroupId): void;
  modifyChat(chat: PhoneNumber | NetworkGroupId, change: ChatChange, last: ChatLastMessage | null): void;
  rejectCall(call: IncomingCall): void;
  checkNumbers(phones: ReadonlyArray<PhoneNumber>): Array<{ phone: PhoneNumber; registered: boolean }>;
  listContacts(): AddressBookEntry[];
  getContact(phone: PhoneNumber): ContactProfile;
  setBlocked(phone: PhoneNumber, blocked: boolean): void;
  listBlocked(): PhoneNumber[];
  getProfile(): OwnProfile;
  updateProfile(changes: ProfileChanges): OwnProfile;
  setGroupPicture(groupId: NetworkGroupId, picture: PictureUpload): void;
  logout(): void;
  /** During a pairing attempt: a code the user of `phone` types on the phone instead of scanning the QR. */
  requestPairingCode(phone: PhoneNumber): string;
  /** Closes quietly: no more events, the session stays valid. */
  close(): void;
}

export class SandboxWorld {
  private readonly state: WorldState;

  constructor(options: SandboxOptions = {}) {
    this.state = new WorldState(options);
  }

  /** Opens a device connection; every event reaches `sink` asynchronously from this call. */
  connect(options: ConnectOptions, sink: NetworkEventHandler): SandboxLink {
    const w = this.state;
    const link = pairing.openLink(w, options, sink);
    return {
      sendMessage: (message) => messaging.sendMessage(w, link, message),
      sendTyping: (to, durationMs) => messaging.sendTyping(w, link, to, durationMs),
      sendPresence: (state, to) => sendPresence(w, link, state, to),
      listGroups: () => groups.listGroups(w, link),
      getGroup: (groupId) => groups.getGroup(w, link, groupId),
      createGroup: (subject, participants) => groups.createGroupByLink(w, link, subject, participants),
      addParticipants: (groupId, phones) => groups.addParticipants(w, link, groupId, phones),
      updateGroup: (groupId, changes) => groups.updateGroup(w, link, groupId, changes),
      changeParticipants: (groupId, phones, action) => admin.changeParticipants(w, link, groupId, phones, action),
      groupInvite: (groupId, revoke) => admin.groupInvite(w, link, groupId, revoke),
      joinGroup: (code) => admin.joinGroup(w, link, code),
      leaveGroup: (groupId) => admin.leaveGroup(w, link, groupId),
      modifyChat: (chat, change, last) => chats.modifyChat(w, link, chat, change, last),
      rejectCall: (call) => calls.rejectCall(w, link, call),
      checkNumbers: (phones) => groups.checkNumbers(w, link, phones),
      listContacts: () => contacts.listContacts(w, link),
      getContact: (phone) => contacts.getContact(w, link, phone),
      setBlocked: (phone, blocked) => contacts.setBlocked(w, link, phone, blocked),
      listBlocked: () => contacts.listBlocked(w, link),
      getProfile: () => contacts.getProfile(w, link),
      updateProfile: (changes) => contacts.updateProfile(w, link, changes),
      setGroupPicture: (groupId, picture) => contacts.setGroupPicture(w, link, groupId, picture),
      logout: () => pairing.logoutLink(w, link),
      requestPairingCode: (phone) => pairing.requestPairingCode(w, link, phone),
      close: () => w.endLink(link),
    };
  }

  scan(qr: string, phone: PhoneNumber, scope?: ScanScope): { device_phone: PhoneNumber } {
    return pairing.scan(this.state, qr, phone, scope);
  }

  pair(pairingCode: string, phone: PhoneNumber, scope?: ScanScope): { device_phone: PhoneNumber } {
    return pairing.pairWithCode(this.state, pairingCode, phone, scope);
  }

  // `view`: see SandboxControl. Without one, the shared view (SHARED_VIEW), and getPhone shows every message.
  upsertPhone(settings: SandboxPhoneSettings, view?: string): SandboxPhone {
    return messaging.upsertPhone(this.state, settings, viewOf(view));
  }

  getPhone(phone: PhoneNumber, view?: string): SandboxPhone {
    return messaging.getPhone(this.state, phone, view === undefined ? undefined : viewOf(view));
  }

  sendFromPhone(
    phone: PhoneNumber,
    to: PhoneNumber,
    message: string | PhoneMessage,
    recipient?: RecipientScope,
    view?: string,
  ): { message_id: string } {
    return messaging.sendFromPhone(this.state, phone, to, message, recipient, viewOf(view));
  }

  changeFromPhone(phone: PhoneNumber, change: SandboxPhoneChange, recipient: RecipientScope, view?: string): void {
    changeFromPhone(this.state, phone, change, recipient, viewOf(view));
  }

  changeChatOnPhone(
    phone: PhoneNumber,
    chat: string,
    change: SandboxChatChange,
    recipient: RecipientScope,
    view?: string,
  ): SandboxChatSettings {
    return chats.changeChatOnPhone(this.state, phone, chat, change, recipient, viewOf(view));
  }

  callFromPhone(
    phone: PhoneNumber,
    call: { video?: unknown; group?: unknown },
    recipient: RecipientScope,
    view?: string,
  ): SandboxCall {
    return calls.callFromPhone(this.state, phone, call, recipient, viewOf(view));
  }

  seedHistory(phone: PhoneNumber, to: PhoneNumber, messages: ReadonlyArray<SeedMessage>, view?: string) {
    return history.seedHistory(this.state, phone, to, messages, viewOf(view));
  }

  readMessage(phone: PhoneNumber, messageId: string, view?: string): void {
    messaging.readMessage(this.state, phone, messageId, view === undefined ? undefined : viewOf(view));
  }

  createGroup(
    name: string,
    members: ReadonlyArray<{ phone: PhoneNumber; admin?: boolean }>,
    view?: string,
  ): NetworkGroup {
    return groups.createGroupByControl(this.state, name, members, viewOf(view));
  }

  changeGroupFromPhone(
    phone: PhoneNumber,
    groupId: NetworkGroupId,
    change: SandboxGroupChange,
    view?: string,
  ): NetworkGroup {
    return contacts.changeGroupFromPhone(this.state, phone, groupId, change, viewOf(view));
  }

  disconnectDevice(deviceId: number, options: { logout: boolean }): void {
    pairing.disconnectDevice(this.state, deviceId, options?.logout === true);
  }

  /**
   * What the sandbox process reports on `GET /health`: open connections, and every device whose connection was
   * closed as `replaced` (its session opened again elsewhere), with how often. In a cluster that count must stay 0.
   */
  health(): { connections: number; replaced: Record<PhoneNumber, number> } {
    let connections = 0;
    for (const link of this.state.links) if (link.state === 'open') connections++;
    return { connections, replaced: Object.fromEntries(this.state.replaced) };
  }

  /** Stops every timer, closes every connection quietly and saves the durable state. */
  close(): void {
    this.state.close();
  }
}
