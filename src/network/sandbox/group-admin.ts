/**
 * Group administration in the sandbox: removing, promoting and demoting members, the invite code, joining by it,
 * and leaving (DECISIONS 16).
 *
 * Owns: why a participant change fails (the codes of ParticipantChangeErrorCode) and who is told of a change
 * (the members, and those a change just took out). Must never: let anyone but an admin change members or see the
 * invite code, or change the group's creator's membership or role.
 */
import { randomBytes } from 'node:crypto';
import type {
  NetworkGroup,
  NetworkGroupId,
  ParticipantAction,
  ParticipantChangeOutcome,
  PhoneNumber,
} from '../network.js';
import { NetworkForbiddenError, NetworkNotFoundError } from '../network.js';
import { GROUP_CAPACITY, adminGroup, groupView, memberGroup, notify } from './groups.js';
import { isWellFormedPhone } from './phones.js';
import type { GroupRecord, Link, WorldState } from './state.js';

/** 22 characters of the URL-safe base64 alphabet, the length of the network's own codes. */
function newInviteCode(): string {
  return randomBytes(16).toString('base64url').slice(0, 22);
}

export function changeParticipants(
  world: WorldState,
  link: Link,
  groupId: NetworkGroupId,
  phones: ReadonlyArray<PhoneNumber>,
  action: ParticipantAction,
): ParticipantChangeOutcome[] {
  const group = adminGroup(world, link, groupId);
  return changeParticipantsBy(world, group, world.requireOpen(link), phones, action);
}

/** `actor` (an admin of the group) changes members; the members are told who did it and whom it changed. */
export function changeParticipantsBy(
  world: WorldState,
  group: GroupRecord,
  actor: PhoneNumber,
  phones: ReadonlyArray<PhoneNumber>,
  action: ParticipantAction,
): ParticipantChangeOutcome[] {
  if (group.participants.get(actor) === null) throw new NetworkForbiddenError();
  const removed = new Set<PhoneNumber>();
  const outcomes = phones.map((phone): ParticipantChangeOutcome => {
    if (!isWellFormedPhone(phone)) return { phone, ok: false, code: 'INVALID_NUMBER' };
    const role = group.participants.get(phone);
    if (role === undefined) return { phone, ok: false, code: 'NOT_A_MEMBER' };
    if (role === 'superadmin' && action !== 'promote') return { phone, ok: false, code: 'FORBIDDEN' };
    if (action === 'remove') {
      group.participants.delete(phone);
      removed.add(phone);
    } else if (action === 'promote') {
      if (role === null) group.participants.set(phone, 'admin');
    } else {
      group.participants.set(phone, null);
    }
    return { phone, ok: true };
  });
  const changed = outcomes.filter((o) => o.ok).map((o) => o.phone);
  if (changed.length > 0) {
    world.changed();
    notify(world, group, removed, { by: actor, participants: { action, phones: changed } });
  }
  return outcomes;
}

/** The group's invite code, an admin's to read; `revoke` makes a new one, so the old link stops working. */
export function groupInvite(world: WorldState, link: Link, groupId: NetworkGroupId, revoke: boolean): string {
  const group = adminGroup(world, link, groupId);
  if (revoke || group.invite === undefined) {
    group.invite = newInviteCode();
    world.changed();
  }
  return group.invite;
}

/** Joins the group `code` opens; a member already in it just sees it. No such code: NetworkNotFoundError. */
export function joinGroup(world: WorldState, link: Link, code: string): NetworkGroup {
  const self = world.requireOpen(link);
  const group = [...world.groups.values()].find((g) => g.invite !== undefined && g.invite === code);
  if (group === undefined) throw new NetworkNotFoundError();
  if (!group.participants.has(self)) {
    if (group.participants.size >= GROUP_CAPACITY) throw new NetworkForbiddenError();
    group.participants.set(self, null);
    world.changed();
    notify(world, group);
  }
  return groupView(world, group, link.view);
}

/** The device leaves; a group left with nobody in it is gone. */
export function leaveGroup(world: WorldState, link: Link, groupId: NetworkGroupId): void {
  const { group, self } = memberGroup(world, link, groupId);
  group.participants.delete(self);
  if (group.participants.size === 0) dissolve(world, group);
  world.changed();
  notify(world, group, new Set([self]));
}

function dissolve(world: WorldState, group: GroupRecord): void {
  world.groups.delete(group.id);
}
