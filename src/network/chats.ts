/**
 * The seam's words for a device's own chat list settings (DECISIONS 16): archiving, pinning and muting a chat,
 * which a network keeps for the account (on WhatsApp: app-state sync, seen on every linked device).
 *
 * Owns: the shape of one change and of the last message a network may need to place it.
 * Must never: import anything but types, or hold behaviour.
 */
import type { NetworkGroupId, PhoneNumber } from './values.js';

/** What to change of one chat; a field left out stays as it is. At least one is given. */
export interface ChatChange {
  readonly archived?: boolean;
  readonly pinned?: boolean;
  /** Muted until this time; null: not muted. */
  readonly mutedUntil?: Date | null;
}

/**
 * The chat's last message as the gateway knows it (WhatsApp places an archive at it). `id` as QuotedMessage's: the
 * id a message of ours was sent with, or the network's id of one received.
 */
export interface ChatLastMessage {
  readonly id: string;
  readonly fromMe: boolean;
  /** Who wrote it, when someone else did in a group. */
  readonly author?: PhoneNumber;
  readonly at: Date;
}

/**
 * The account changed a chat's settings elsewhere (on the phone, or another linked device): what changed, as a
 * ChatChange. On WhatsApp an app-state sync (`chats.update`); told again for a change the gateway made itself.
 */
export interface ChatChangedEvent {
  readonly type: 'chat_changed';
  readonly chat: PhoneNumber | NetworkGroupId;
  readonly change: ChatChange;
}
