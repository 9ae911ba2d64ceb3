/**
 * WhatsApp groups → the seam's groups, and the network's group errors. Pure.
 *
 * Owns: GroupMetadata → NetworkGroup (participants as phone numbers, a LID
 * participant through the number the network sends with it), the table of
 * per-participant add codes, and request-level errors (a Boom whose code is
 * in `data`) → NetworkForbiddenError / NetworkNotFoundError.
 * Must never: list a participant under a LID as if it were a number.
 */
import type { GroupMetadata } from 'baileys';
import {
  NetworkForbiddenError,
  NetworkNotFoundError,
  type AddParticipantOutcome,
  type NetworkGroup,
  type NetworkParticipant,
  type PhoneNumber,
} from '../network.js';
import { senderPhone } from './numbers.js';

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
  };
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
