/**
 * The sandbox control interface (docs/internals.md, The network seam and the sandbox): what a tester can do to the
 * simulated network. Implemented by the in-process sandbox and by the
 * WebSocket client of a sandbox running as its own process; the gateway's
 * `/sandbox/...` routes call it and never know which one runs. It is part of
 * the seam (beside network.ts), so the gateway reaches it without importing
 * src/network/sandbox/.
 *
 * Must never: be reachable when the gateway runs against a real network.
 */
import type { IncomingContent } from './incoming-content.js';
import type { ChangedMessage, MessageChange, NetworkGroup, NetworkGroupId, PhoneNumber } from './values.js';

/**
 * What a phone sends to a device: any incoming kind, optionally as a reply to `replyTo`, a message of that
 * device's chat named as a device names what it quotes (QuotedMessage in network.ts): with `fromMe`, the id the
 * device sent it with; otherwise the network's id of a message it received.
 */
export interface PhoneMessage {
  readonly content: IncomingContent;
  readonly replyTo?: { readonly id: string; readonly fromMe: boolean };
  /**
   * A media kind's bytes: an http(s) address the sandbox reads them from when the device downloads them
   * (NetworkConnection.downloadMedia), as WhatsApp's phones leave media on its media hosts.
   */
  readonly mediaUrl?: string;
}

export type PhonePrivacy = 'everyone' | 'nobody';

export interface SandboxPhoneSettings {
  readonly phone: PhoneNumber;
  readonly name?: string;
  readonly registered?: boolean;
  readonly privacy?: PhonePrivacy;
  readonly online?: boolean;
  readonly auto_read?: boolean;
  /** The phone's about text, as devices see it (`GET /contacts/{phone}`). */
  readonly about?: string;
  /** Where the phone's profile picture is; null: none. A change tells devices (`contact.updated`). */
  readonly picture_url?: string | null;
  /** The phone is a business account. */
  readonly is_business?: boolean;
}

export interface SandboxInboxEntry {
  /** The gateway's message id (the id the sender chose). */
  readonly message_id: string;
  /** Sending phone number (the device's number). */
  readonly from: PhoneNumber;
  /** Set when the message was sent to a group. */
  readonly group_id?: string;
  readonly type: string;
  /** The content as received; media is summarised as `{mimetype, size, sha256}` instead of bytes. */
  readonly content: Record<string, unknown>;
  readonly received_at: string;
  readonly read_at: string | null;
  /** How long the sender showed "typing..." right before this message, when it did. */
  readonly typing_ms?: number;
  /** The numbers the message mentions, when it mentions any. */
  readonly mentions?: ReadonlyArray<PhoneNumber>;
  /** The message this one replies to, when it is a reply: its id, who wrote it and its text. */
  readonly quoted?: { readonly message_id: string; readonly from: PhoneNumber; readonly text?: string };
  /** True when the sender forwarded it (a copy of another message). */
  readonly forwarded?: boolean;
}

/** What a device told a phone of its presence, or its chat state in a chat with the phone (`group_id`: a group's). */
export interface SandboxSeenPresence {
  readonly from: PhoneNumber;
  readonly state: 'available' | 'unavailable' | 'composing' | 'recording' | 'paused';
  readonly group_id?: string;
  readonly at: string;
}

export interface SandboxPhone {
  readonly phone: PhoneNumber;
  readonly name: string | null;
  readonly registered: boolean;
  readonly privacy: PhonePrivacy;
  readonly online: boolean;
  readonly auto_read: boolean;
  readonly blocks_everyone: boolean;
  readonly rate_limited: boolean;
  readonly about: string | null;
  readonly picture_url: string | null;
  readonly is_business: boolean;
  /** The devices (their numbers) that blocked this phone. */
  readonly blocked_by: ReadonlyArray<PhoneNumber>;
  readonly inbox: ReadonlyArray<SandboxInboxEntry>;
  /** The presence and chat states devices told the phone, oldest first. */
  readonly presence: ReadonlyArray<SandboxSeenPresence>;
  /** The calls the phone made to devices, oldest first. */
  readonly calls: ReadonlyArray<SandboxCall>;
  /** The chat settings this number's devices set on the network (archive, pin, mute), one entry per chat. */
  readonly chats: ReadonlyArray<SandboxChatSettings>;
}

/** What the phone changes of one of its chats (`PATCH /sandbox/phones/{phone}/chats/{chat}`); ISO 8601 or null. */
export interface SandboxChatChange {
  readonly archived?: boolean;
  readonly pinned?: boolean;
  readonly muted_until?: string | null;
}

/** One chat's settings as a device of the number set them (network/sandbox/chats.ts). */
export interface SandboxChatSettings {
  /** A phone number or a group id. */
  readonly chat: string;
  readonly archived: boolean;
  readonly pinned: boolean;
  /** ISO 8601; null: not muted. */
  readonly muted_until: string | null;
  /** The last message the device named with its latest change, if any. */
  readonly last_message_id?: string | null;
  readonly changed_at?: string;
}

/** A call a phone made to a device: `ringing` until the device rejects it. */
export interface SandboxCall {
  readonly id: string;
  /** The device's number. */
  readonly to: PhoneNumber;
  readonly video: boolean;
  readonly group_id?: NetworkGroupId;
  readonly status: 'ringing' | 'rejected';
  /** When the phone called (ISO 8601). */
  readonly at: string;
}

/** A control-API failure with the HTTP status and message the gateway should answer with. */
export class SandboxControlError extends Error {
  constructor(
    readonly status: 400 | 404 | 409,
    message: string,
    readonly detail?: string,
  ) {
    super(message);
    this.name = 'SandboxControlError';
  }
}

/** Which devices a scan may pair: a QR of any other device is unknown to the caller. */
export interface ScanScope {
  readonly deviceIds: readonly number[];
}

/** Which device a phone's message goes to: the one holding this network session. */
export interface RecipientScope {
  readonly session: string;
}

/**
 * A change a phone makes to a message (docs/internals.md, The network seam and the sandbox): the message named as
 * the device knows it (ours by our id, the phone's own by the network's id), the group it is in when it is
 * one of the phone's own group messages, and what is done to it.
 */
export type SandboxPhoneChange = { readonly target: ChangedMessage; readonly group?: string } & (
  MessageChange | PhoneVote
);

/** A phone's vote on a poll: the option texts it chooses now (none: the vote withdrawn). */
export interface PhoneVote {
  readonly kind: 'vote';
  readonly selected: ReadonlyArray<string>;
}

/** What a phone does to a group: change its info, or change members (an admin's). */
export type SandboxGroupChange =
  | { readonly subject?: string; readonly description?: string; readonly picture_url?: string }
  | { readonly action: 'remove' | 'promote' | 'demote'; readonly participants: ReadonlyArray<PhoneNumber> };

export interface SandboxControl {
  /**
   * A phone scans the QR whose decoded text is `qr`. Throws SandboxControlError(400, 'Invalid QR code') for
   * unknown or rotated-out codes, and for a code of a device outside `scope` when one is given.
   */
  scan(qr: string, phone: PhoneNumber, scope?: ScanScope): Promise<{ device_phone: PhoneNumber }>;
  /**
   * A phone's user types the pairing code a device asked for. 400 'Invalid pairing code' for an unknown or
   * ended one, or one of a device outside `scope`; 'Phone number mismatch' for another number.
   */
  pair(pairingCode: string, phone: PhoneNumber, scope?: ScanScope): Promise<{ device_phone: PhoneNumber }>;
  /**
   * Every method taking `view` acts in that view only (an account's, named by the gateway): settings are set
   * and read there, a phone's messages go to and from that view's devices, and only that view's messages show.
   */
  upsertPhone(settings: SandboxPhoneSettings, view?: string): Promise<SandboxPhone>;
  /** Throws SandboxControlError(404, 'Phone not found') for a number never seen. Magic numbers are always "seen". */
  getPhone(phone: PhoneNumber, view?: string): Promise<SandboxPhone>;
  /**
   * The phone sends a text (or any incoming kind) to a device's number. Throws 404 when no paired device has that
   * number; with `recipient`, only the device holding that session gets it (404 when it is not paired with `to`).
   */
  sendFromPhone(
    phone: PhoneNumber,
    to: PhoneNumber,
    message: string | PhoneMessage,
    recipient?: RecipientScope,
    view?: string,
  ): Promise<{ message_id: string }>;
  /**
   * The phone reacts to a message, edits or deletes one of its own, or votes on a poll; the device holding `recipient`'s session
   * is told. 404 'Message not found' when the message is the device's and the phone did not receive it,
   * 404 'Device not found' for an unknown session, 400 for a malformed change or an unregistered phone.
   */
  changeFromPhone(
    phone: PhoneNumber,
    change: SandboxPhoneChange,
    recipient: RecipientScope,
    view?: string,
  ): Promise<void>;
  /**
   * The phone calls the device holding `recipient`'s session (`group`: a group call in that group); the device is
   * told (`incoming_call`). 404 'Device not found' for an unknown session, 409 'Device not connected' when it is
   * offline, 400 for a malformed call or an unregistered phone.
   */
  callFromPhone(
    phone: PhoneNumber,
    call: { video?: boolean; group?: NetworkGroupId },
    recipient: RecipientScope,
    view?: string,
  ): Promise<SandboxCall>;
  /**
   * The device's own phone (`phone`: the number the device holding `recipient`'s session is paired to) archives, pins
   * or mutes one of its chats: recorded in the phone's `chats` and told to that device (`chat_changed`, queued while
   * it is offline), as WhatsApp syncs it to every linked device. 404 'Device not found' for an unknown session or
   * one of another number, 404 'Group not found' for a group the phone is not in, 400 for a malformed chat.
   */
  changeChatOnPhone(
    phone: PhoneNumber,
    chat: string,
    change: SandboxChatChange,
    recipient: RecipientScope,
    view?: string,
  ): Promise<SandboxChatSettings>;
  /**
   * The phone had a conversation with the number `to` before `to` pairs: `messages` (texts, `from_me` when `to`
   * wrote them, `at` ISO 8601) join `to`'s history, offered to the device it pairs next (docs/api.md, History sync).
   * 400 for a malformed number or message, or more than 1,000 messages at once.
   */
  seedHistory(
    phone: PhoneNumber,
    to: PhoneNumber,
    messages: ReadonlyArray<{ readonly text: string; readonly from_me?: boolean; readonly at?: string }>,
    view?: string,
  ): Promise<{ seeded: number }>;
  /** The phone reads a message it received: the sender gets a `read` status. 404 if not in its inbox. */
  readMessage(phone: PhoneNumber, messageId: string, view?: string): Promise<void>;
  /** Creates a group on the network. The first admin member is the superadmin when none is marked. */
  createGroup(
    name: string,
    members: ReadonlyArray<{ phone: PhoneNumber; admin?: boolean }>,
    view?: string,
  ): Promise<NetworkGroup>;
  /**
   * A member phone changes a group (docs/internals.md, The network seam and the sandbox): its subject, description
   * or picture, or (an admin) removes, promotes or demotes members. Every member device is told who did it.
   * 404 'Group not found' when the phone is not in the group, 400 'Not allowed' when it may not.
   */
  changeGroupFromPhone(
    phone: PhoneNumber,
    groupId: NetworkGroupId,
    change: SandboxGroupChange,
    view?: string,
  ): Promise<NetworkGroup>;
  /** Drops the device connection with this gateway device id (it comes back by itself), or logs it out from the phone. 404 if not connected. */
  disconnectDevice(deviceId: number, options: { logout: boolean }): Promise<void>;
}
