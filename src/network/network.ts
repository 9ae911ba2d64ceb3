/**
 * The seam between the gateway and a messaging network.
 *
 * Owns: the one narrow, typed interface through which the gateway connects a
 * device, hears what happens to it, and asks the network for work. The sandbox
 * (src/network/sandbox) and the real-network connector implement it; nothing
 * outside src/network/ may know which implementation runs.
 *
 * Must never: hold gateway state (devices, quota, queues) or touch the store.
 * Implementations report facts through events; the gateway decides what they
 * mean and records them.
 */
import type { ChatChange, ChatChangedEvent, ChatLastMessage } from './chats.js';
import type { ContactChangedEvent, ContactOperations } from './contacts.js';
import type { GroupsChangedEvent, ParticipantAction, ParticipantChangeOutcome } from './group-admin.js';
import type { HistoryEvent } from './history.js';
import type { IncomingContent, IncomingMedia, IncomingQuote } from './incoming-content.js';
import type { OutgoingNetworkMessage, PresenceState } from './outgoing-content.js';
import type { SandboxControl } from './sandbox-control.js';
import type {
  ChangedMessage,
  GroupChanges,
  GroupSettingName,
  MessageChange,
  NetworkGroup,
  NetworkGroupId,
  PhoneNumber,
} from './values.js';

export {
  NetworkForbiddenError,
  NetworkMediaError,
  NetworkNotFoundError,
  NetworkSendError,
  NetworkSettingRefusedError,
  NetworkUnavailableError,
} from './errors.js';

export type { ChatChange, ChatChangedEvent, ChatLastMessage } from './chats.js';
export type * from './contacts.js';
export type * from './group-admin.js';
export { HISTORY_BATCH, withinHistory, type HistoryEvent, type HistoryMessage } from './history.js';
export type { IncomingContactCard, IncomingContent, IncomingMedia, IncomingQuote } from './incoming-content.js';
export type { MediaSource } from './media-source.js';
export type {
  LinkPreview,
  NetworkMessageContent,
  OutgoingNetworkMessage,
  PresenceState,
  QuotedMessage,
  SharedContact,
  TemplateButton,
} from './outgoing-content.js';
export type {
  ChangedMessage,
  GroupChanges,
  GroupSettingName,
  GroupSettings,
  NetworkGroup,
  NetworkGroupId,
  NetworkParticipant,
  ParticipantRole,
  MessageChange,
  PhoneNumber,
} from './values.js';

/** A call to the device, as `incoming_call` announces it and `rejectCall` names it. */
export interface IncomingCall {
  /** The network's id of the call. */
  readonly id: string;
  /** The caller's number. */
  readonly from: PhoneNumber;
  /** The caller's LID, when the network named the caller by it (WhatsApp). */
  readonly fromLid?: string;
  readonly video: boolean;
  /** Set for a group call. */
  readonly group?: NetworkGroupId;
}

/** Opaque credentials a network hands out at pairing; stored by the gateway, never shown or logged. */
export type NetworkSession = string;

export interface ConnectOptions {
  /** Gateway device id; only used for logging and correlation. */
  readonly deviceId: number;
  /** A session from an earlier pairing, or null to start a pairing attempt (the network emits `qr`). */
  readonly session: NetworkSession | null;
  /** When set, only this phone may complete pairing; a scan from another number is refused by the network. */
  readonly expectedPhone?: PhoneNumber | null;
  /**
   * The sandbox only: whose view of the virtual phones this device's traffic meets (the gateway gives
   * the device's account id), so one account's phone settings never change another's. Other networks ignore it.
   */
  readonly view?: string;
}

/**
 * The order in which a network applies the changes of one `updateGroup` call. The network stops at the
 * first refusal: the changes before it are applied, the rest are not.
 */
export const GROUP_CHANGE_ORDER: readonly GroupSettingName[] = [
  'subject',
  'description',
  'disappearingSeconds',
  'onlyAdminsCanEdit',
  'onlyAdminsCanSend',
];

/** A group just created, as the network shows it, plus the requested participants it was created without. */
export interface CreatedNetworkGroup extends NetworkGroup {
  readonly notAdded: ReadonlyArray<{ readonly phone: PhoneNumber; readonly code: AddParticipantErrorCode }>;
}

export type AddParticipantErrorCode =
  | 'USER_NOT_FOUND'
  | 'USER_BLOCKED'
  | 'ALREADY_MEMBER'
  | 'PRIVACY_SETTINGS'
  | 'GROUP_FULL'
  | 'RATE_LIMITED'
  | 'INVALID_NUMBER';

export type AddParticipantOutcome =
  | { readonly phone: PhoneNumber; readonly ok: true; readonly name?: string }
  | { readonly phone: PhoneNumber; readonly ok: false; readonly code: AddParticipantErrorCode; readonly error: string };

/** What a network tells the gateway about one device connection. */
export type NetworkEvent =
  /** A (new) QR code text for the current pairing attempt. Rotates while the attempt lasts. */
  | { readonly type: 'qr'; readonly qr: string }
  /** Pairing finished: the phone that scanned and the session to store for reconnecting. Followed by `connected`. */
  | { readonly type: 'paired'; readonly phone: PhoneNumber; readonly session: NetworkSession }
  /** The connection is open and can send. */
  | { readonly type: 'connected'; readonly phone: PhoneNumber }
  /** The connection dropped; the session stays valid. The gateway reconnects, no sooner than `retry` allows. */
  | { readonly type: 'disconnected'; readonly reason: string; readonly retry?: ReconnectHint }
  /** The session was ended from the phone (or is no longer valid). The gateway must pair again. */
  | { readonly type: 'logged_out'; readonly reason: string }
  /**
   * A receipt; `sent` is the network's acknowledgement arriving after the send had already been given up as
   * timed out (docs/whatsapp.md, Acknowledgements): the message reached the network after all.
   */
  | {
      readonly type: 'message_status';
      readonly id: string;
      readonly status: 'sent' | 'delivered' | 'read';
      readonly at: Date;
      /**
       * A group message's receipt (`delivered` or `read`): the member whose phone sent it, by phone number, or by
       * the network's own id for the member when its number is not known. The message moves on the first member's.
       */
      readonly participant?: string;
    }
  /** The network refused a message after it had taken it (it was `sent`): it will not be delivered. */
  | {
      readonly type: 'message_status';
      readonly id: string;
      readonly status: 'failed';
      readonly reason: string;
      readonly at: Date;
    }
  | {
      readonly type: 'incoming_message';
      /** The network's id of the incoming message. */
      readonly id: string;
      /**
       * The sender's phone number; on WhatsApp, while no number is known for a sender that wrote from its LID
       * alone, the LID form (`12345@lid`, equal to `fromLid`; docs/whatsapp.md, Senders known by LID).
       */
      readonly from: PhoneNumber;
      /** The sender's LID (`12345@lid`) when the network named one. */
      readonly fromLid?: string;
      /** Set when the message was posted in a group. */
      readonly group?: NetworkGroupId;
      readonly content: IncomingContent;
      /** Set when the message replies to another. */
      readonly quoted?: IncomingQuote;
      /**
       * People the message mentions, in its order: phone numbers; on WhatsApp the LID form (`12345@lid`) of one
       * whose number is not known, as `from` does.
       */
      readonly mentions?: ReadonlyArray<string>;
      readonly at: Date;
    }
  /**
   * Someone changed a message after it was sent (docs/webhooks.md, Reactions, edits and deletes): reacted to it
   * (`emoji`, `""` when the reaction was taken away), edited it (its author: the new text) or deleted it for everyone.
   * Told in the order the network handed it over, after the messages before it. `from`, `fromLid` and `group`
   * are who did it and where, as for `incoming_message`.
   */
  | {
      readonly type: 'message_changed';
      readonly target: ChangedMessage;
      readonly from: PhoneNumber;
      readonly fromLid?: string;
      readonly group?: NetworkGroupId;
      readonly change: MessageChange;
      readonly at: Date;
    }
  /**
   * Someone voted on a poll (docs/webhooks.md, Poll votes): `target` names the poll as a change names its message,
   * `selected` the option texts now chosen, in the poll's order (empty when the vote was withdrawn). A later vote of
   * the same voter replaces the earlier one. `from`, `fromLid` and `group` as for `message_changed`. With `hashed`,
   * `selected` holds the options' SHA-256 (poll-options.ts) instead of their texts: the gateway matches them.
   */
  | {
      readonly type: 'poll_vote';
      readonly target: ChangedMessage;
      readonly from: PhoneNumber;
      readonly fromLid?: string;
      readonly group?: NetworkGroupId;
      readonly selected: ReadonlyArray<string>;
      readonly hashed?: true;
      readonly at: Date;
    }
  /** A phone calls the device (alone, or in a group call): the gateway announces it and may reject it. */
  | ({ readonly type: 'incoming_call' } & IncomingCall)
  /** Groups the device belongs to changed (created, joined, left, members or subject changed). */
  | GroupsChangedEvent
  | ContactChangedEvent
  /** The account archived, pinned or muted a chat elsewhere (the phone, another linked device). */
  | ChatChangedEvent
  /** The network made known the phone number behind a LID (`12345@lid`); it may repeat what was known. */
  | { readonly type: 'lid_resolved'; readonly lid: string; readonly phone: PhoneNumber }
  /** The phone's history offered at pairing, in batches, then its end (history.ts). */
  | HistoryEvent;

/**
 * How soon the gateway may reconnect after a drop (docs/internals.md, WhatsApp and sandbox accounts): `backoff` (the default) its usual
 * backoff; `replaced` another client took over the session (no sooner than a minute, a warning);
 * `outdated` the network refused this client's protocol version (no sooner than ten minutes, an
 * error logged once per device; an upgrade is needed); `absent` the device is on a network this gateway
 * does not run (docs/networks-per-device.md: it stays paired there; no sooner than ten minutes, a warning once per device).
 */
export type ReconnectHint = 'backoff' | 'replaced' | 'outdated' | 'absent';

export type NetworkEventHandler = (event: NetworkEvent) => void;

/**
 * The networks a gateway can run, by the name a device records for the one it paired on (docs/networks-per-device.md) and
 * clients see in the device object. `sandbox` is the simulated network, in-process or its own process.
 */
export const NETWORK_NAMES = ['sandbox', 'whatsapp'] as const;
export type NetworkName = (typeof NETWORK_NAMES)[number];

/**
 * What a connection does differently from the seam's own forms: the one place the gateway learns it,
 * instead of asking which network runs.
 */
export interface ConnectionCapabilities {
  /**
   * How `list` and `template` reach the recipient: `native` as the interactive form they describe, or
   * `text` as formatted text with numbered choices (docs/internals.md, WhatsApp and sandbox accounts; the message then shows `rendered_as: "text"`).
   */
  readonly interactive: 'native' | 'text';
}

/** One device's connection to the network. Every method may reject with NetworkUnavailableError while not connected. */
export interface NetworkConnection extends ContactOperations {
  /** Absent: every content type is delivered in its own form (`interactive: 'native'`). */
  readonly capabilities?: ConnectionCapabilities;
  /** Resolves once the network has taken the message (it is then `sent`). Idempotent by `message.id`. */
  sendMessage(message: OutgoingNetworkMessage): Promise<void>;
  /** Shows the typing indicator to `to` for about `durationMs`. */
  sendTyping(to: PhoneNumber | NetworkGroupId, durationMs: number): Promise<void>;
  /**
   * Tells the network the device's presence (`available`/`unavailable`, without `to`), or its chat state in the
   * chat with `to` (a phone number or a group id): typing, recording a voice note, or stopped.
   */
  sendPresence(state: PresenceState, to?: PhoneNumber | NetworkGroupId): Promise<void>;
  listGroups(): Promise<NetworkGroup[]>;
  getGroup(groupId: NetworkGroupId): Promise<NetworkGroup>;
  /** The device creates a group and becomes its superadmin; participants the network refuses are left out (`notAdded`). */
  createGroup(subject: string, participants: ReadonlyArray<PhoneNumber>): Promise<CreatedNetworkGroup>;
  /** Per-participant outcome; rejects with NetworkForbiddenError / NetworkNotFoundError for request-level problems. */
  addParticipants(groupId: NetworkGroupId, phones: ReadonlyArray<PhoneNumber>): Promise<AddParticipantOutcome[]>;
  /**
   * Applies `changes` in GROUP_CHANGE_ORDER. Rejects with NetworkForbiddenError when the device may change
   * none of them, NetworkSettingRefusedError when the network refused one (naming it and what was applied).
   */
  updateGroup(groupId: NetworkGroupId, changes: GroupChanges): Promise<NetworkGroup>;
  /**
   * Removes, promotes or demotes members, one outcome per phone in the order asked. Rejects with
   * NetworkForbiddenError when the device is not an admin, NetworkNotFoundError when it is not in the group.
   */
  changeParticipants(
    groupId: NetworkGroupId,
    phones: ReadonlyArray<PhoneNumber>,
    action: ParticipantAction,
  ): Promise<ParticipantChangeOutcome[]>;
  /** The group's invite code (an admin's to read, NetworkForbiddenError otherwise); `revoke` makes a new one first. */
  groupInvite(groupId: NetworkGroupId, revoke: boolean): Promise<string>;
  /** Joins the group an invite code opens (NetworkNotFoundError: no such code) and answers it as now seen. */
  joinGroup(code: string): Promise<NetworkGroup>;
  /** The device leaves the group (NetworkNotFoundError when it is not in it). */
  leaveGroup(groupId: NetworkGroupId): Promise<void>;
  checkNumbers(phones: ReadonlyArray<PhoneNumber>): Promise<Array<{ phone: PhoneNumber; registered: boolean }>>;
  /** Archives, pins or mutes the chat (a phone or a group id) for the device's account, in that order (chats.ts). */
  modifyChat(chat: PhoneNumber | NetworkGroupId, change: ChatChange, last: ChatLastMessage | null): Promise<void>;
  /** Rejects a call announced by `incoming_call` (the caller sees it declined); a call already over is no error. */
  rejectCall(call: IncomingCall): Promise<void>;
  /**
   * The bytes of media this device received (`content.media` of an `incoming_message`), decrypted and checked
   * against the network's hashes, as a stream read while it arrives: never held whole. Rejects, or the stream
   * throws, when they cannot be had (NetworkMediaError: `permanent` when trying again cannot help). Absent: the
   * network announces no media to download.
   */
  downloadMedia?(media: IncomingMedia): Promise<AsyncIterable<Uint8Array>>;
  /**
   * During a pairing attempt (connected with no session): a code the user types into the phone's
   * linked-devices screen instead of scanning the QR, bound to `phone` by the network. Rejects with
   * NetworkUnavailableError when no pairing attempt runs on this connection.
   */
  requestPairingCode(phone: PhoneNumber): Promise<string>;
  /** Ends the session on the network (the phone forgets this device). Emits `logged_out`. */
  logout(): Promise<void>;
  /** Closes the connection locally without ending the session (shutdown, handing the device to another node). No events after this. */
  close(): void;
  /**
   * Resolves once every store write the connection started in the background (a WhatsApp session's credentials
   * and keys) has finished or failed. The gateway waits for it after `close()` before the device's lease may go to
   * another node, which then reads the session as last written. Absent: nothing is written in the background.
   */
  settled?(): Promise<void>;
}

export interface Network {
  /** Shown at start-up and in the dashboard; never used for branching outside src/network/. */
  readonly description: string;
  /** Opens a connection for a device. Events flow to `onEvent` until `close()` or `logout()`. */
  connect(options: ConnectOptions, onEvent: NetworkEventHandler): NetworkConnection;
  /** Present only when this network is the sandbox: the control API of docs/internals.md, The network seam and the sandbox. */
  readonly sandbox?: SandboxControl;
  /** Releases everything the network holds (sockets, timers). */
  close(): Promise<void>;
}
