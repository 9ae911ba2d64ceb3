/**
 * Contacts and profiles in the sandbox (DECISIONS 16): the device's address book (the phones its view named),
 * one phone's profile as a device sees it, blocking, the device's own name, about text and picture, a group's
 * picture, and phones that change a group (control API).
 *
 * Owns: what a device sees of a phone, what blocking records (the phone's `blocked_by` shows it), who is told when
 * a phone's name or picture changes (`contact_changed`, to the open devices of the view that changed it) and who
 * changed a group (`groups_changed` with its `detail`). Must never: show one view's settings to another view's
 * devices, or let a member that is not an admin change what only admins may.
 */
import { createHash } from 'node:crypto';
import type {
  AddressBookEntry,
  ContactProfile,
  NetworkGroup,
  NetworkGroupId,
  OwnProfile,
  PhoneNumber,
  PictureUpload,
  ProfileChanges,
} from '../network.js';
import { NetworkForbiddenError, NetworkMediaError, NetworkNotFoundError } from '../network.js';
import type { SandboxGroupChange } from '../sandbox-control.js';
import { SandboxControlError } from '../sandbox-control.js';
import * as admin from './group-admin.js';
import { groupView, memberGroup, notify } from './groups.js';
import { isWellFormedPhone, magicOf, type DeviceProfile, type PhoneBehaviour, type PhoneRecord } from './phones.js';
import type { PhoneView } from './phones.js';
import type { GroupRecord, Link, WorldState } from './state.js';

/** Where the sandbox says a picture it was given lives: named by the digest of its bytes. */
export const SANDBOX_PICTURE_PREFIX = 'https://sandbox.invalid/pictures/';

function profileOf(world: WorldState, device: PhoneNumber): DeviceProfile {
  let profile = world.profiles.get(device);
  if (profile === undefined) {
    profile = { name: null, about: null, pictureUrl: null, blocked: new Set() };
    world.profiles.set(device, profile);
  }
  return profile;
}

/** The address of an uploaded picture: refused unless its bytes are there. */
function pictureAddress(picture: PictureUpload): string {
  const bytes = Buffer.from(picture.base64, 'base64');
  if (bytes.length === 0) throw new NetworkMediaError('the picture is empty', 'permanent');
  const digest = createHash('sha256').update(bytes).digest('hex').slice(0, 32);
  return `${SANDBOX_PICTURE_PREFIX}${digest}.${picture.mimetype === 'image/png' ? 'png' : 'jpg'}`;
}

/** The devices (by number) that blocked `phone`. */
export function blockedBy(world: WorldState, phone: PhoneNumber): PhoneNumber[] {
  return [...world.profiles].filter(([, p]) => p.blocked.has(phone)).map(([device]) => device);
}

/**
 * After a tester changed a phone already set up in `view` (a phone set up the first time is a new contact, no
 * change): its name or picture changed, so the view's devices are told.
 */
export function announceContact(world: WorldState, phone: PhoneRecord, view: PhoneView, before: PhoneBehaviour): void {
  const after = phone.in(view);
  const nameChanged = after.name !== before.name;
  const pictureChanged = after.pictureUrl !== before.pictureUrl;
  if (!nameChanged && !pictureChanged) return;
  for (const link of [...world.links]) {
    if (link.state !== 'open' || link.view !== view || link.phone === null || link.phone === phone.phone) continue;
    world.emit(link, {
      type: 'contact_changed',
      phone: phone.phone,
      ...(nameChanged ? { name: after.name } : {}),
      ...(pictureChanged ? { picture: true as const } : {}),
    });
  }
}

/** The phones this device's view named: its address book. */
export function listContacts(world: WorldState, link: Link): AddressBookEntry[] {
  const self = world.requireOpen(link);
  const entries: AddressBookEntry[] = [];
  for (const record of world.phones.values()) {
    if (record.phone === self) continue;
    const seen = record.in(link.view);
    if (seen.name === null) continue;
    entries.push({ phone: record.phone, name: seen.name, notifyName: seen.name, isBusiness: seen.isBusiness });
  }
  return entries.sort((a, b) => a.phone.localeCompare(b.phone));
}

export function getContact(world: WorldState, link: Link, phone: PhoneNumber): ContactProfile {
  const self = world.requireOpen(link);
  if (!isWellFormedPhone(phone)) throw new NetworkNotFoundError('not a phone number');
  const seen = world.phones.get(phone)?.in(link.view);
  const registered = seen?.registered ?? magicOf(phone).registered;
  // A phone whose privacy is `nobody` shows no about text or picture.
  const shown = registered && seen !== undefined && seen.privacy !== 'nobody';
  return {
    phone,
    name: registered ? (seen?.name ?? null) : null,
    about: shown ? seen.about : null,
    pictureUrl: shown ? seen.pictureUrl : null,
    registered,
    blocked: profileOf(world, self).blocked.has(phone),
  };
}

export function setBlocked(world: WorldState, link: Link, phone: PhoneNumber, blocked: boolean): void {
  const self = world.requireOpen(link);
  if (!isWellFormedPhone(phone)) throw new NetworkNotFoundError('not a phone number');
  const list = profileOf(world, self).blocked;
  if (blocked) list.add(phone);
  else list.delete(phone);
  world.changed();
}

export function listBlocked(world: WorldState, link: Link): PhoneNumber[] {
  return [...profileOf(world, world.requireOpen(link)).blocked].sort();
}

export function getProfile(world: WorldState, link: Link): OwnProfile {
  const { name, about, pictureUrl } = profileOf(world, world.requireOpen(link));
  return { name, about, pictureUrl };
}

export function updateProfile(world: WorldState, link: Link, changes: ProfileChanges): OwnProfile {
  const profile = profileOf(world, world.requireOpen(link));
  if (changes.picture !== undefined) profile.pictureUrl = pictureAddress(changes.picture);
  if (changes.name !== undefined) profile.name = changes.name;
  if (changes.about !== undefined) profile.about = changes.about;
  world.changed();
  return getProfile(world, link);
}

/** Who may change the group's info: anyone in it, or only admins when the group says so. */
function editableGroup(world: WorldState, member: PhoneNumber, groupId: NetworkGroupId): GroupRecord {
  const group = world.groups.get(groupId);
  if (!group?.participants.has(member)) throw new NetworkNotFoundError();
  if (group.settings.onlyAdminsCanEdit && group.participants.get(member) === null) throw new NetworkForbiddenError();
  return group;
}

export function setGroupPicture(world: WorldState, link: Link, groupId: NetworkGroupId, picture: PictureUpload): void {
  const { self } = memberGroup(world, link, groupId);
  const group = editableGroup(world, self, groupId);
  group.picture = pictureAddress(picture);
  world.changed();
  notify(world, group, new Set(), { by: self });
}

/** Control API: a member phone changes the group's info, or (an admin) its members. */
export function changeGroupFromPhone(
  world: WorldState,
  phone: PhoneNumber,
  groupId: NetworkGroupId,
  change: SandboxGroupChange,
  view: PhoneView,
): NetworkGroup {
  if (!isWellFormedPhone(phone)) throw new SandboxControlError(400, 'Invalid phone number format');
  const group = world.groups.get(groupId);
  if (!group?.participants.has(phone)) throw new SandboxControlError(404, 'Group not found', 'the phone is not in it');
  if (typeof change !== 'object' || change === null) throw new SandboxControlError(400, 'Invalid group change');
  try {
    if ('action' in change) {
      const asked = Array.isArray(change.participants) ? change.participants.filter(isWellFormedPhone) : [];
      if (!['remove', 'promote', 'demote'].includes(change.action) || asked.length === 0) {
        throw new SandboxControlError(400, 'Invalid group change', 'action and participants are required');
      }
      admin.changeParticipantsBy(world, group, phone, asked, change.action);
    } else {
      const { subject, description, picture_url: picture } = change;
      for (const [field, value] of Object.entries({ subject, description, picture_url: picture })) {
        if (value !== undefined && (typeof value !== 'string' || value.trim() === '')) {
          throw new SandboxControlError(400, 'Invalid group change', `${field} must be a non-empty text`);
        }
      }
      if (subject === undefined && description === undefined && picture === undefined) {
        throw new SandboxControlError(400, 'Invalid group change', 'nothing to change');
      }
      editableGroup(world, phone, groupId);
      if (subject !== undefined) group.subject = subject;
      if (description !== undefined) group.description = description;
      if (picture !== undefined) group.picture = picture;
      world.changed();
      notify(world, group, new Set(), { by: phone });
    }
  } catch (error) {
    if (error instanceof NetworkForbiddenError) {
      throw new SandboxControlError(400, 'Not allowed', 'only an administrator of the group may do that');
    }
    throw error;
  }
  return groupView(world, group, view);
}
