/**
 * A device's presence and chat states in the sandbox (issue 26; docs/internals.md, The network seam and the
 * sandbox): `available`/`unavailable`, and typing, recording or paused in one chat.
 *
 * Owns: who sees what a device tells: a chat state reaches the phone it names, or every other member of the group;
 * a presence reaches the phones the device has written to (in its own view), as contacts see someone online.
 * Each phone keeps what it saw in its `presence` list (PhoneRecord.seePresence), shown with its inbox.
 * Must never: let a closed connection tell anything (NetworkUnavailableError), or accept a state for the wrong kind
 * of target (a chat state needs a chat, a presence none).
 */
import { NetworkSendError, type NetworkGroupId, type PhoneNumber, type PresenceState } from '../network.js';
import { isGroupId } from './messaging.js';
import { isWellFormedPhone } from './phones.js';
import type { Link, WorldState } from './state.js';

const CHAT_STATES = new Set<PresenceState>(['composing', 'recording', 'paused']);
const PRESENCES = new Set<PresenceState>(['available', 'unavailable']);

export function sendPresence(
  world: WorldState,
  link: Link,
  state: PresenceState,
  to?: PhoneNumber | NetworkGroupId,
): void {
  const from = world.requireOpen(link);
  const at = new Date().toISOString();
  if (to === undefined) {
    if (!PRESENCES.has(state)) throw new NetworkSendError(`${String(state)} needs a chat`, 'permanent');
    for (const phone of world.phones.values()) {
      const wroteTo = phone.inbox.some((s) => s.view === link.view && s.entry.from === from);
      if (wroteTo) phone.seePresence({ from, state, at }, link.view);
    }
    return;
  }
  if (!CHAT_STATES.has(state)) throw new NetworkSendError(`${String(state)} is not a chat state`, 'permanent');
  if (isGroupId(to)) {
    const group = world.groups.get(to);
    if (group === undefined || !group.participants.has(from))
      throw new NetworkSendError('not in that group', 'permanent');
    for (const member of group.participants.keys()) {
      if (member !== from) world.phone(member).seePresence({ from, state, group_id: to, at }, link.view);
    }
    return;
  }
  if (!isWellFormedPhone(to)) throw new NetworkSendError('invalid recipient number', 'permanent');
  world.phone(to).seePresence({ from, state, at }, link.view);
}
