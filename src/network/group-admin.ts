/**
 * The seam's words for administering a group the device is in: changing members' membership or role, the invite
 * link, joining and leaving (DECISIONS 16).
 *
 * Owns: the shapes a network answers with, and what each outcome code means.
 * Must never: import anything but types, or hold behaviour.
 */
import type { NetworkGroupId, PhoneNumber } from './values.js';

/** What a participants change does: take members out, make them admins, or make admins members again. */
export type ParticipantAction = 'remove' | 'promote' | 'demote';

/**
 * Why one participant was not changed: not in the group (`NOT_A_MEMBER`), not a well-formed number
 * (`INVALID_NUMBER`), or the network forbids it (`FORBIDDEN`: the group's creator cannot be removed or demoted).
 */
export type ParticipantChangeErrorCode = 'NOT_A_MEMBER' | 'INVALID_NUMBER' | 'FORBIDDEN';

export type ParticipantChangeOutcome =
  | { readonly phone: PhoneNumber; readonly ok: true }
  | { readonly phone: PhoneNumber; readonly ok: false; readonly code: ParticipantChangeErrorCode };

/**
 * What the network said about one group change beside the group's id (`groups_changed`): who made it, and for a
 * participants change by an admin, which members it removed, promoted or demoted.
 */
export interface GroupChangeDetail {
  readonly by: PhoneNumber;
  readonly participants?: { readonly action: ParticipantAction; readonly phones: ReadonlyArray<PhoneNumber> };
}

/** Groups the device belongs to changed (created, joined, left, members or subject changed); `detail`: who did it. */
export interface GroupsChangedEvent {
  readonly type: 'groups_changed';
  readonly groupIds: ReadonlyArray<NetworkGroupId>;
  readonly detail?: GroupChangeDetail;
}
