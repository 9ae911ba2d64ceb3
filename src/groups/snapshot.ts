/**
 * What the gateway keeps of a group the network reported.
 *
 * Owns: turning a NetworkGroup into the stored snapshot (participants with
 * their roles, the count, and the acting device's own role).
 * Must never: do I/O.
 */
import type { NetworkGroup } from '../network/network.js';
import { DEFAULT_GROUP_CAPACITY } from './limits.js';
import type { StoredParticipant } from './present.js';
import type { GroupSnapshot } from './repository.js';

export function snapshotOf(group: NetworkGroup, devicePhone: string | null): GroupSnapshot {
  const participants: StoredParticipant[] = group.participants.map((p) =>
    p.name ? { phone: p.phone, name: p.name, role: p.role } : { phone: p.phone, role: p.role },
  );
  const self = devicePhone === null ? undefined : participants.find((p) => p.phone === devicePhone);
  return {
    network_id: group.id,
    subject: group.subject,
    description: group.description,
    participants: JSON.stringify(participants),
    participant_count: participants.length,
    capacity: group.capacity > 0 ? group.capacity : DEFAULT_GROUP_CAPACITY,
    device_admin: self?.role ?? null,
    only_admins_can_send: group.settings === undefined ? null : Number(group.settings.onlyAdminsCanSend),
    only_admins_can_edit: group.settings === undefined ? null : Number(group.settings.onlyAdminsCanEdit),
    disappearing_seconds: group.settings === undefined ? null : group.settings.disappearingSeconds,
    ...(group.pictureId === undefined ? {} : { picture_id: group.pictureId }),
  };
}
