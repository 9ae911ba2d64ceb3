/**
 * A participant the gateway could not add, as the client reads it (spec 7.3): its code and the text that
 * explains it. Both the group service (a group created without some of its participants) and the members
 * add service (members.ts) answer with it.
 *
 * Owns: the text of each failure code.
 * Must never: decide whether a participant failed.
 */
import type { AddParticipantErrorCode } from '../network/network.js';
import type { FailedMember } from './present.js';

/** What each failure code tells the client (spec 7.3). */
const FAILURE_TEXT: Record<AddParticipantErrorCode, string> = {
  USER_NOT_FOUND: 'Number not registered on the network',
  USER_BLOCKED: 'User has blocked the device',
  ALREADY_MEMBER: 'User is already in the group',
  PRIVACY_SETTINGS: "User's privacy settings prevent adding",
  GROUP_FULL: 'Group reached its member maximum',
  RATE_LIMITED: 'Too many addition requests',
  INVALID_NUMBER: 'Number format invalid: digits only, country code first, no +, no leading 0',
};

export function failure(phone: string, code: AddParticipantErrorCode, text = FAILURE_TEXT[code]): FailedMember {
  return { phone, status: 'failed', error: text, error_code: code };
}
