/**
 * A device's chat list settings in the sandbox (DECISIONS 16): archive, pin and mute, kept for the device's
 * number as WhatsApp keeps them for the account, and shown in that phone's view (`GET /sandbox/phones/{phone}`,
 * `chats`), so a test sees what the gateway carried out.
 *
 * Owns: recording one change (PhoneRecord.setChat), and what the network refuses: a chat that is neither a
 * well-formed number nor a group the device is in (NetworkNotFoundError).
 * Must never: emit events (the setting is the device's own; nobody else hears of it).
 */
import type { ChatChange, ChatLastMessage, NetworkGroupId, PhoneNumber } from '../network.js';
import { NetworkNotFoundError } from '../network.js';
import { isGroupId } from './messaging.js';
import { isWellFormedPhone } from './phones.js';
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
}
