/**
 * Phones changing messages in the sandbox (issue 26; docs/internals.md, The network seam and the sandbox):
 * a phone reacts to a message, edits or deletes one of its own for everyone, or votes on a poll.
 *
 * Owns: the rules the simulated network applies before it tells a device (the phone is well-formed and
 * registered; a device's message is named only by a phone that received it from that device) and the
 * `message_changed` (or `poll_vote`) event the device then gets, through its session like an incoming message (so it follows the
 * messages the phone sent before it).
 * Must never: change what a phone's inbox holds, or tell a device that does not hold the given session. Which of the
 * device's own messages a phone wrote is the gateway's to check: the network keeps no record of what phones sent.
 */
import type { MessageChange, PhoneNumber } from '../network.js';
import type { PhoneVote, RecipientScope, SandboxPhoneChange } from '../sandbox-control.js';
import { SandboxControlError } from '../sandbox-control.js';
import { isWellFormedPhone, SHARED_VIEW, type PhoneView } from './phones.js';
import type { WorldState } from './state.js';

/** Longest emoji (a sequence of code points) a reaction carries, as the control API allows it. */
const MAX_EMOJI = 32;
/** Longest edited text, as a phone's message may be. */
const MAX_TEXT = 4096;

/** Most options one vote names: a poll has at most 12. */
const MAX_VOTE_OPTIONS = 12;

/** The change itself, checked: a call over the wire may carry anything. */
function changeOf(given: SandboxPhoneChange): MessageChange | PhoneVote {
  switch (given?.kind) {
    case 'vote': {
      const selected: unknown = given.selected;
      const valid =
        Array.isArray(selected) &&
        selected.length <= MAX_VOTE_OPTIONS &&
        selected.every((s) => typeof s === 'string' && s.length > 0 && s.length <= 100);
      if (!valid) throw new SandboxControlError(400, 'Invalid vote', 'selected must be up to 12 option texts');
      return { kind: 'vote', selected: [...(selected as string[])] };
    }
    case 'reaction':
      if (typeof given.emoji !== 'string' || given.emoji.length > MAX_EMOJI) {
        throw new SandboxControlError(400, 'Invalid reaction', 'emoji must be one emoji, or "" to take it away');
      }
      return { kind: 'reaction', emoji: given.emoji };
    case 'edited':
      if (typeof given.text !== 'string' || given.text.length === 0 || given.text.length > MAX_TEXT) {
        throw new SandboxControlError(400, 'Invalid edit', `text must be 1 to ${MAX_TEXT} characters`);
      }
      return { kind: 'edited', text: given.text };
    case 'deleted':
      return { kind: 'deleted' };
    default:
      throw new SandboxControlError(400, 'Invalid change', 'kind must be "reaction", "edited", "deleted" or "vote"');
  }
}

export function changeFromPhone(
  world: WorldState,
  phone: PhoneNumber,
  given: SandboxPhoneChange,
  recipient: RecipientScope,
  view: PhoneView = SHARED_VIEW,
): void {
  if (!isWellFormedPhone(phone)) throw new SandboxControlError(400, 'Invalid phone number format');
  const change = changeOf(given);
  const target = given.target;
  if (typeof target?.id !== 'string' || target.id === '' || typeof target.fromMe !== 'boolean') {
    throw new SandboxControlError(400, 'Invalid change', 'target must name a message: {id, fromMe}');
  }
  if (!world.phone(phone).in(view).registered) {
    throw new SandboxControlError(400, 'Phone number is not registered', `${phone} has no account on the network`);
  }
  const session = world.sessions.get(recipient?.session ?? '');
  if (session === undefined) throw new SandboxControlError(404, 'Device not found', 'no device holds that session');
  let group = typeof given.group === 'string' ? given.group : undefined;
  if (target.fromMe) {
    // The device's message: only a phone it reached can change anything about it.
    const received = world.phones
      .get(phone)
      ?.inbox.findLast((s) => s.entry.message_id === target.id && s.senderSession === session.token);
    if (received === undefined) {
      throw new SandboxControlError(404, 'Message not found', `${phone} did not receive that message`);
    }
    group = received.entry.group_id;
  }
  const about = {
    target: { id: target.id, fromMe: target.fromMe },
    from: phone,
    ...(group === undefined ? {} : { group }),
  };
  if (change.kind === 'vote') {
    world.emitToSession(session.token, { type: 'poll_vote', ...about, selected: change.selected, at: new Date() });
    return;
  }
  world.emitToSession(session.token, { type: 'message_changed', ...about, change, at: new Date() });
}
