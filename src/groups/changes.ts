/**
 * What changed in a group between the stored snapshot and the one the network reports now (`group.updated`;
 * docs/groups.md, Events), and who the participants events of others' changes name.
 *
 * Owns: the `changes` object of `group.updated`: each changed field under the name the group object uses
 * (`subject`, `description`, `permissions`, `disappearing_messages`, with their new values) and `picture: "changed"`;
 * a setting (or a picture) the network did not report is no change.
 * Must never: do I/O, or call a change what is only the first snapshot of a group.
 */
import type { GroupRow, GroupSnapshot } from './repository.js';
import { presentGroup } from './present.js';

export type GroupChangesJson = Record<string, unknown>;

/** The changes from `stored` to `fresh`, or null when nothing a client sees of the group's info changed. */
export function groupChanges(stored: GroupRow, fresh: GroupSnapshot): GroupChangesJson | null {
  const changes: GroupChangesJson = {};
  if (stored.subject !== fresh.subject) changes.subject = fresh.subject;
  if (stored.description !== fresh.description) changes.description = fresh.description;
  const after = presentGroup({ ...stored, ...fresh }, null);
  const permissionsChanged =
    (fresh.only_admins_can_send !== null && fresh.only_admins_can_send !== stored.only_admins_can_send) ||
    (fresh.only_admins_can_edit !== null && fresh.only_admins_can_edit !== stored.only_admins_can_edit);
  if (permissionsChanged) changes.permissions = after.permissions;
  if (fresh.disappearing_seconds !== null && fresh.disappearing_seconds !== stored.disappearing_seconds) {
    changes.disappearing_messages = after.disappearing_messages;
  }
  if (fresh.picture_id !== undefined && fresh.picture_id !== (stored.picture_id ?? null)) changes.picture = 'changed';
  return Object.keys(changes).length === 0 ? null : changes;
}

/** The reference to a group every group event carries. */
export function groupRef(group: Pick<GroupRow, 'id' | 'network_id' | 'subject'>): {
  group_id: string;
  network_id: string;
  group_name: string;
} {
  return { group_id: String(group.id), network_id: group.network_id, group_name: group.subject };
}
