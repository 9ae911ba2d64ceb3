/**
 * A device's chat list settings in the sandbox (DECISIONS 16): archive, pin and mute, kept for the device's
 * number as WhatsApp keeps them for the account, and shown in that phone's view (`GET /sandbox/phones/{phone}`,
 * `chats`), so a test sees what the gateway carried out.
 *
 * The phone itself may change a chat too (`PATCH /sandbox/phones/{phone}/chats/{chat}`): recorded the same way and
 * told to the device as `chat_changed`, as WhatsApp's app-state sync tells every linked device.
 *
 * Owns: recording one change (PhoneRecord.setChat), and what the network refuses: a chat that is neither a
 * well-formed number nor a group the device is in (NetworkNotFoundError; from the phone: SandboxControlError).
 * Must never: tell anyone but the number's own device of a change (the setting is the account's own), or tell the
 * device of a change it made itself.
 */
import type { ChatChange, ChatLastMessage, NetworkGroupId, PhoneNumber } from '../network.js';
import { NetworkNotFoundError } from '../network.js';
import type { RecipientScope, SandboxChatChange, SandboxChatSettings } from '../sandbox-control.js';
import { SandboxControlError } from '../sandbox-control.js';
import { isGroupId } from './messaging.js';
import { isWellFormedPhone, type PhoneView } from './phones.js';
import type { Link, WorldState } from './state.js';

export function modifyChat(
  world: WorldState,
  link: Link,
  chat: PhoneNumber | NetworkGroupId,
  change: ChatChange,
  last: ChatLastMessage | null,
): void {
  const self = world.requireOpen(link);
  if (isGroupId(chat)) {
    if (world.groups.get(chat)?.participants.has(self) !== true) throw new NetworkNotFoundError();
  } else if (!isWellFormedPhone(chat)) {
    throw new NetworkNotFoundError('no such chat');
  }
  world.phone(self).setChat(chat, change, last, link.view);
  world.changed();
}

/** The phone changes one of its chats; its device (the one holding `recipient`'s session) is told. */
export function changeChatOnPhone(
  world: WorldState,
  phone: PhoneNumber,
  chat: string,
  wanted: SandboxChatChange,
  recipient: RecipientScope,
  view: PhoneView,
): SandboxChatSettings {
  const session = world.sessions.get(recipient.session);
  if (session === undefined || session.phone !== phone) {
    throw new SandboxControlError(404, 'Device not found', 'no device of that number holds that session');
  }
  if (isGroupId(chat)) {
    if (world.groups.get(chat)?.participants.has(phone) !== true) {
      throw new SandboxControlError(404, 'Group not found', 'the phone is not in that group');
    }
  } else if (!isWellFormedPhone(chat)) {
    throw new SandboxControlError(400, 'Invalid phone number format', 'the chat is a phone number or a group id');
  }
  const mutedUntil = wanted.muted_until;
  const change: ChatChange = {
    ...(wanted.archived === undefined ? {} : { archived: wanted.archived }),
    ...(wanted.pinned === undefined ? {} : { pinned: wanted.pinned }),
    ...(mutedUntil === undefined ? {} : { mutedUntil: mutedUntil === null ? null : new Date(mutedUntil) }),
  };
  const settings = world.phone(phone).setChat(chat, change, null, view);
  world.changed();
  world.emitToSession(session.token, { type: 'chat_changed', chat, change });
  return settings;
}
