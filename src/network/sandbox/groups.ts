/**
 * Groups in the sandbox: creation, membership rules, admins, capacity and the
 * `groups_changed` notifications.
 *
 * Owns: who may add whom and why an add fails (the outcome codes of the
 * network interface). Must never: hand out its internal records (callers get
 * fresh NetworkGroup objects) or notify devices that are not members.
 */
import { randomInt } from 'node:crypto';
import type {
  AddParticipantErrorCode,
  AddParticipantOutcome,
  CreatedNetworkGroup,
  GroupChangeDetail,
  GroupChanges,
  GroupSettingName,
  NetworkGroup,
  NetworkGroupId,
  ParticipantRole,
  PhoneNumber,
} from '../network.js';
import {
  GROUP_CHANGE_ORDER,
  NetworkForbiddenError,
  NetworkNotFoundError,
  NetworkSettingRefusedError,
} from '../network.js';
import { SandboxControlError } from '../sandbox-control.js';
import { isWellFormedPhone, magicOf, type PhoneView } from './phones.js';
import { DEFAULT_GROUP_SETTINGS, type GroupRecord, type Link, type WorldState } from './state.js';

/** The disappearing-message timers the network offers (24 hours, 7 days, 90 days), and 0 for off. */
export const DISAPPEARING_SECONDS: readonly number[] = [0, 86_400, 604_800, 7_776_000];

export const GROUP_CAPACITY = 1024;

const ADD_ERRORS: Record<AddParticipantErrorCode, string> = {
  INVALID_NUMBER: 'not a valid phone number',
  USER_NOT_FOUND: 'this number is not registered on the network',
  ALREADY_MEMBER: 'already a member of the group',
  USER_BLOCKED: 'this user has blocked the device',
  PRIVACY_SETTINGS: "this user's privacy settings do not allow adding them to groups",
  RATE_LIMITED: 'rate limited by the network; try again later',
  GROUP_FULL: `the group is full (${GROUP_CAPACITY} members)`,
};

function newGroupId(world: WorldState): NetworkGroupId {
  for (;;) {
    const digits = Array.from({ length: 12 }, () => randomInt(10)).join('');
    const id = `120363${digits}@g.us`;
    if (!world.groups.has(id)) return id;
  }
}

/** The group as `view` sees it: participants carry the names that view gave their phones. */
export function groupView(world: WorldState, group: GroupRecord, view: PhoneView): NetworkGroup {
  return {
    id: group.id,
    subject: group.subject,
    description: group.description,
    participants: [...group.participants].map(([phone, role]) => {
      const name = world.phones.get(phone)?.in(view).name;
      return name ? { phone, name, role } : { phone, role };
    }),
    capacity: GROUP_CAPACITY,
    settings: { ...group.settings },
    pictureId: group.picture ?? null,
  };
}

/**
 * Tells every open connection of a member (and of the `former` members a change just took out) that the group
 * changed; offline ones re-sync on connect.
 */
export function notify(
  world: WorldState,
  group: GroupRecord,
  former: ReadonlySet<PhoneNumber> = new Set(),
  detail?: GroupChangeDetail,
): void {
  for (const link of [...world.links]) {
    if (
      link.state === 'open' &&
      link.phone !== null &&
      (group.participants.has(link.phone) || former.has(link.phone))
    ) {
      world.emit(link, { type: 'groups_changed', groupIds: [group.id], ...(detail === undefined ? {} : { detail }) });
    }
  }
}

/** Why `phone` cannot join `group`, checked in the order the network interface documents; null when it can. */
function refusal(
  world: WorldState,
  group: GroupRecord,
  phone: PhoneNumber,
  view: PhoneView,
): AddParticipantErrorCode | null {
  if (!isWellFormedPhone(phone)) return 'INVALID_NUMBER';
  const record = world.phone(phone).in(view);
  if (!record.registered) return 'USER_NOT_FOUND';
  if (group.participants.has(phone)) return 'ALREADY_MEMBER';
  if (record.blocksEveryone) return 'USER_BLOCKED';
  if (record.privacy === 'nobody') return 'PRIVACY_SETTINGS';
  if (record.rateLimited) return 'RATE_LIMITED';
  if (group.participants.size >= GROUP_CAPACITY) return 'GROUP_FULL';
  return null;
}

function insert(world: WorldState, subject: string, members: Map<PhoneNumber, ParticipantRole>): GroupRecord {
  const group: GroupRecord = {
    id: newGroupId(world),
    subject,
    description: null,
    participants: members,
    settings: { ...DEFAULT_GROUP_SETTINGS },
  };
  world.groups.set(group.id, group);
  world.changed();
  notify(world, group);
  return group;
}

/**
 * Control API: a group made "on the network" by a tester. Members are taken as
 * given (a tester may want anyone in it) except malformed or unregistered
 * numbers, which are refused. The first member marked admin is the superadmin;
 * with no admin marked the group has none, so "not an admin" can be tested.
 */
export function createGroupByControl(
  world: WorldState,
  name: string,
  members: ReadonlyArray<{ phone: PhoneNumber; admin?: boolean }>,
  view: PhoneView,
): NetworkGroup {
  if (typeof name !== 'string' || name.trim() === '') throw new SandboxControlError(400, 'Group name is required');
  if (!Array.isArray(members) || members.length === 0) {
    throw new SandboxControlError(400, 'A group needs at least one member');
  }
  if (members.length > GROUP_CAPACITY) {
    throw new SandboxControlError(400, 'Too many members', `a group holds at most ${GROUP_CAPACITY} members`);
  }
  const participants = new Map<PhoneNumber, ParticipantRole>();
  let superadmin = false;
  for (const member of members) {
    if (!isWellFormedPhone(member?.phone)) {
      throw new SandboxControlError(400, 'Invalid phone number format', `member ${String(member?.phone)}`);
    }
    if (!world.phone(member.phone).in(view).registered) {
      throw new SandboxControlError(400, 'Phone number is not registered', `member ${member.phone}`);
    }
    const role: ParticipantRole = member.admin ? (superadmin ? 'admin' : 'superadmin') : null;
    if (role === 'superadmin') superadmin = true;
    if (!participants.has(member.phone)) participants.set(member.phone, role);
  }
  return groupView(world, insert(world, name, participants), view);
}

/** A device creates a group: it becomes superadmin; numbers that could not be added are left out. */
export function createGroupByLink(
  world: WorldState,
  link: Link,
  subject: string,
  phones: ReadonlyArray<PhoneNumber>,
): CreatedNetworkGroup {
  const self = world.requireOpen(link);
  const draft: GroupRecord = {
    id: '',
    subject,
    description: null,
    participants: new Map([[self, 'superadmin']]),
    settings: DEFAULT_GROUP_SETTINGS,
  };
  const notAdded: Array<{ phone: PhoneNumber; code: AddParticipantErrorCode }> = [];
  const seen = new Set<PhoneNumber>();
  for (const phone of phones) {
    // A number asked for twice is one participant, with one outcome.
    if (seen.has(phone)) continue;
    seen.add(phone);
    const code = refusal(world, draft, phone, link.view);
    if (code === null) draft.participants.set(phone, null);
    else notAdded.push({ phone, code });
  }
  return { ...groupView(world, insert(world, subject, draft.participants), link.view), notAdded };
}

/** The group as the device may see it: unknown and not-a-member look the same. */
export function memberGroup(
  world: WorldState,
  link: Link,
  groupId: NetworkGroupId,
): { group: GroupRecord; self: PhoneNumber } {
  const self = world.requireOpen(link);
  const group = world.groups.get(groupId);
  if (!group?.participants.has(self)) throw new NetworkNotFoundError();
  return { group, self };
}

export function adminGroup(world: WorldState, link: Link, groupId: NetworkGroupId): GroupRecord {
  const { group, self } = memberGroup(world, link, groupId);
  if (group.participants.get(self) === null) throw new NetworkForbiddenError();
  return group;
}

export function listGroups(world: WorldState, link: Link): NetworkGroup[] {
  const self = world.requireOpen(link);
  return [...world.groups.values()].filter((g) => g.participants.has(self)).map((g) => groupView(world, g, link.view));
}

export function getGroup(world: WorldState, link: Link, groupId: NetworkGroupId): NetworkGroup {
  return groupView(world, memberGroup(world, link, groupId).group, link.view);
}

export function addParticipants(
  world: WorldState,
  link: Link,
  groupId: NetworkGroupId,
  phones: ReadonlyArray<PhoneNumber>,
): AddParticipantOutcome[] {
  const group = adminGroup(world, link, groupId);
  const outcomes: AddParticipantOutcome[] = phones.map((phone) => {
    const code = refusal(world, group, phone, link.view);
    if (code !== null) return { phone, ok: false, code, error: ADD_ERRORS[code] };
    group.participants.set(phone, null);
    const name = world.phones.get(phone)?.in(link.view).name;
    return name ? { phone, ok: true, name } : { phone, ok: true };
  });
  if (outcomes.some((o) => o.ok)) {
    world.changed();
    notify(world, group);
  }
  return outcomes;
}

/**
 * A member changes the group, one change at a time in GROUP_CHANGE_ORDER, stopping at the first refusal:
 * who may post and who may edit are an admin's to set; the subject, description and disappearing
 * messages too while only admins may edit. A refusal before anything changed for want of rights is
 * NetworkForbiddenError; any other is NetworkSettingRefusedError naming the change and what went before.
 */
export function updateGroup(
  world: WorldState,
  link: Link,
  groupId: NetworkGroupId,
  changes: GroupChanges,
): NetworkGroup {
  const { group, self } = memberGroup(world, link, groupId);
  const admin = group.participants.get(self) !== null;
  const applied: GroupSettingName[] = [];
  try {
    for (const name of GROUP_CHANGE_ORDER) {
      const value = changes[name];
      if (value === undefined) continue;
      const adminOnly =
        name === 'onlyAdminsCanSend' || name === 'onlyAdminsCanEdit' || group.settings.onlyAdminsCanEdit;
      if (adminOnly && !admin) {
        if (applied.length === 0) throw new NetworkForbiddenError();
        throw new NetworkSettingRefusedError(name, applied, 'only an administrator of the group can change this');
      }
      if (name === 'disappearingSeconds' && !DISAPPEARING_SECONDS.includes(value as number)) {
        throw new NetworkSettingRefusedError(name, applied, 'not a disappearing-message timer the network offers');
      }
      applyChange(group, name, value);
      applied.push(name);
    }
  } finally {
    if (applied.length > 0) {
      world.changed();
      notify(world, group, new Set(), { by: self });
    }
  }
  return groupView(world, group, link.view);
}

function applyChange(group: GroupRecord, name: GroupSettingName, value: string | number | boolean): void {
  switch (name) {
    case 'subject':
      group.subject = value as string;
      return;
    case 'description':
      group.description = value as string;
      return;
    case 'onlyAdminsCanSend':
      group.settings = { ...group.settings, onlyAdminsCanSend: value as boolean };
      return;
    case 'onlyAdminsCanEdit':
      group.settings = { ...group.settings, onlyAdminsCanEdit: value as boolean };
      return;
    case 'disappearingSeconds':
      group.settings = { ...group.settings, disappearingSeconds: value as number };
      return;
  }
}

export function checkNumbers(
  world: WorldState,
  link: Link,
  phones: ReadonlyArray<PhoneNumber>,
): Array<{ phone: PhoneNumber; registered: boolean }> {
  world.requireOpen(link);
  // Looking a number up does not create a phone: only numbers something happened to are "seen".
  return phones.map((phone) => ({
    phone,
    registered:
      isWellFormedPhone(phone) && (world.phones.get(phone)?.in(link.view).registered ?? magicOf(phone).registered),
  }));
}
