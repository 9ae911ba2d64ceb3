/**
 * WhatsApp groups → the seam's groups, the network's group errors, and group
 * changes → the socket's group queries.
 *
 * Owns: GroupMetadata → NetworkGroup (participants as phone numbers, a LID
 * participant through the number the network sends with it; settings from
 * `announce`, `restrict` and `ephemeralDuration`), the table of
 * per-participant add codes, request-level errors (a Boom whose code is in
 * `data`) → NetworkForbiddenError / NetworkNotFoundError, and applying a
 * GroupChanges one query per change, in the seam's order, stopping at the
 * first refusal.
 * Must never: list a participant under a LID as if it were a number, or
 * report a change as made that the network refused.
 */
import type { GroupMetadata } from 'baileys';
import {
  GROUP_CHANGE_ORDER,
  NetworkForbiddenError,
  NetworkNotFoundError,
  NetworkSettingRefusedError,
  type AddParticipantOutcome,
  type GroupChanges,
  type GroupSettingName,
  type NetworkGroup,
  type NetworkParticipant,
  type PhoneNumber,
} from '../network.js';
import { senderPhone } from './numbers.js';
import type { SocketPort } from './socket-port.js';

/** WhatsApp's group size limit. */
export const GROUP_CAPACITY = 1024;

export function toNetworkGroup(metadata: GroupMetadata): NetworkGroup {
  const participants: NetworkParticipant[] = [];
  for (const p of metadata.participants) {
    const phone = senderPhone(p.id, p.phoneNumber);
    if (phone === null) continue;
    participants.push({
      phone,
      role: p.admin === 'superadmin' ? 'superadmin' : p.admin === 'admin' ? 'admin' : null,
      ...(p.notify ? { name: p.notify } : p.name ? { name: p.name } : {}),
    });
  }
  return {
    id: metadata.id,
    subject: metadata.subject,
    description: metadata.desc ?? null,
    participants,
    capacity: GROUP_CAPACITY,
    settings: {
      // `announcement`: only admins post; `locked`: only admins edit the group's info.
      onlyAdminsCanSend: metadata.announce === true,
      onlyAdminsCanEdit: metadata.restrict === true,
      disappearingSeconds: metadata.ephemeralDuration ?? 0,
    },
  };
}

type GroupSocket = Pick<
  SocketPort,
  'groupUpdateSubject' | 'groupUpdateDescription' | 'groupSettingUpdate' | 'groupToggleEphemeral'
>;

function query(socket: GroupSocket, groupId: string, name: GroupSettingName, value: string | number | boolean) {
  switch (name) {
    case 'subject':
      return socket.groupUpdateSubject(groupId, value as string);
    case 'description':
      return socket.groupUpdateDescription(groupId, value as string);
    case 'disappearingSeconds':
      // 0 sends `not_ephemeral`: disappearing messages off.
      return socket.groupToggleEphemeral(groupId, value as number);
    case 'onlyAdminsCanEdit':
      return socket.groupSettingUpdate(groupId, value === true ? 'locked' : 'unlocked');
    case 'onlyAdminsCanSend':
      return socket.groupSettingUpdate(groupId, value === true ? 'announcement' : 'not_announcement');
  }
}

/**
 * Applies each change as its own query, in GROUP_CHANGE_ORDER. A group the device is not in is
 * NetworkNotFoundError; a refusal for want of rights before anything changed is NetworkForbiddenError;
 * any other refusal is NetworkSettingRefusedError, naming the change and those applied before it.
 */
export async function applyGroupChanges(socket: GroupSocket, groupId: string, changes: GroupChanges): Promise<void> {
  const applied: GroupSettingName[] = [];
  for (const name of GROUP_CHANGE_ORDER) {
    const value = changes[name];
    if (value === undefined) continue;
    try {
      await query(socket, groupId, name, value);
    } catch (error) {
      const mapped = groupError(error);
      if (mapped instanceof NetworkNotFoundError) throw mapped;
      if (mapped instanceof NetworkForbiddenError && applied.length === 0) throw mapped;
      const code = (error as { data?: unknown } | null)?.data;
      const reason = mapped instanceof NetworkForbiddenError ? 'not allowed for this device' : 'refused by the network';
      throw new NetworkSettingRefusedError(name, applied, code === undefined ? reason : `${reason} (${String(code)})`);
    }
    applied.push(name);
  }
}

/**
 * One participant's add result. The meanings come from WhatsApp Web (through other clients' readings);
 * 401 and 408 are uncertain and listed in the manual checklist.
 */
export function addOutcome(phone: PhoneNumber, status: string, groupFull: boolean): AddParticipantOutcome {
  const fail = (code: Extract<AddParticipantOutcome, { ok: false }>['code'], error: string): AddParticipantOutcome => ({
    phone,
    ok: false,
    code,
    error,
  });
  switch (status) {
    case '200':
      return { phone, ok: true };
    case '403':
      return fail('PRIVACY_SETTINGS', "the user's privacy settings do not allow being added (403)");
    case '409':
      return fail('ALREADY_MEMBER', 'already a member of the group (409)');
    case '404':
      return fail('USER_NOT_FOUND', 'not on WhatsApp (404)');
    case '401':
      return fail('USER_BLOCKED', 'the user has blocked this number (401)');
    case '419':
      return fail('GROUP_FULL', 'the group is full (419)');
    case '500':
      return groupFull
        ? fail('GROUP_FULL', 'the group is full (500)')
        : fail('RATE_LIMITED', 'refused by the network (500)');
    case '429':
      return fail('RATE_LIMITED', 'too many additions (429)');
    case '408':
      return fail('RATE_LIMITED', 'the user left the group recently (408)');
    case '400':
      return fail('INVALID_NUMBER', 'not a valid number (400)');
    default:
      return fail('RATE_LIMITED', `refused by the network (${status})`);
  }
}

/** A request-level group error from the network, as the seam's error; anything else unchanged. */
export function groupError(error: unknown): unknown {
  const data = (error as { data?: unknown } | null)?.data;
  const code = typeof data === 'number' ? data : typeof data === 'string' ? Number(data) : NaN;
  if (code === 401 || code === 403) return new NetworkForbiddenError();
  if (code === 404) return new NetworkNotFoundError();
  return error;
}
