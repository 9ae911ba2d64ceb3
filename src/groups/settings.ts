/**
 * Group settings as the API names them (docs/internals.md, Whatspie compatibility) ↔ the network seam's GroupChanges and
 * GroupSettings.
 *
 * Owns: the disappearing-message durations the API offers and their seconds, the API field each
 * seam setting is reported under, and turning a `PUT /groups/{id}` body into GroupChanges.
 * Must never: talk to the network or the store.
 */
import type { GroupChanges, GroupSettingName } from '../network/network.js';

/** The durations WhatsApp offers for disappearing messages, as the API writes them. */
export const DISAPPEARING_DURATIONS = { '24h': 86_400, '7d': 604_800, '90d': 7_776_000 } as const;
export type DisappearingDuration = keyof typeof DISAPPEARING_DURATIONS;

/** The API's duration for a number of seconds; null for a timer the API has no name for. */
export function durationOf(seconds: number): DisappearingDuration | null {
  const found = Object.entries(DISAPPEARING_DURATIONS).find(([, value]) => value === seconds);
  return found === undefined ? null : (found[0] as DisappearingDuration);
}

/** The field of `PUT /groups/{id}` each seam setting came from: what a refusal names. */
export const SETTING_FIELDS: Record<GroupSettingName, string> = {
  subject: 'subject',
  description: 'description',
  onlyAdminsCanSend: 'permissions.only_admins_can_send',
  onlyAdminsCanEdit: 'permissions.only_admins_can_edit',
  disappearingSeconds: 'disappearing_messages',
};

export interface UpdateGroupInput {
  readonly subject?: string;
  readonly description?: string;
  readonly permissions?: { readonly only_admins_can_send?: boolean; readonly only_admins_can_edit?: boolean };
  readonly disappearing_messages?: { readonly enabled: boolean; readonly duration?: DisappearingDuration };
}

/**
 * The changes a body asks for, or the fields that are wrong with it. Turning disappearing messages on
 * needs a duration; turning them off ignores one.
 */
export function groupChanges(
  input: UpdateGroupInput,
): { changes: GroupChanges } | { errors: Record<string, string[]> } {
  const changes: { -readonly [K in keyof GroupChanges]: GroupChanges[K] } = {};
  if (input.subject !== undefined) changes.subject = input.subject;
  if (input.description !== undefined) changes.description = input.description;
  if (input.permissions?.only_admins_can_send !== undefined) {
    changes.onlyAdminsCanSend = input.permissions.only_admins_can_send;
  }
  if (input.permissions?.only_admins_can_edit !== undefined) {
    changes.onlyAdminsCanEdit = input.permissions.only_admins_can_edit;
  }
  const disappearing = input.disappearing_messages;
  if (disappearing !== undefined) {
    if (disappearing.enabled && disappearing.duration === undefined) {
      return { errors: { 'disappearing_messages.duration': ['is required when enabled is true'] } };
    }
    changes.disappearingSeconds =
      disappearing.enabled && disappearing.duration !== undefined ? DISAPPEARING_DURATIONS[disappearing.duration] : 0;
  }
  if (Object.keys(changes).length === 0) {
    return { errors: { body: ['give subject, description, permissions or disappearing_messages'] } };
  }
  return { changes };
}
