/**
 * Groups as clients see them (docs/internals.md, Groups) and the member-addition result of
 * spec 2.6, with their schemas.
 *
 * Owns: turning a stored group row into the API shape, and those shapes'
 * schemas. Must never: read the store or the network, or fail on a stored
 * participant list it cannot parse (it shows none instead).
 */
import { Type, type Static } from '@sinclair/typebox';
import { iso } from '../clock.js';
import { Nullable } from '../shapes.js';
import type { ParticipantRole } from '../network/network.js';
import type { GroupRow } from './repository.js';
import { DISAPPEARING_DURATIONS, durationOf } from './settings.js';

const Role = Nullable(Type.Union([Type.Literal('admin'), Type.Literal('superadmin')]));

export const ParticipantSchema = Type.Object({
  phone: Type.String(),
  name: Type.Optional(Type.String({ description: 'Present when the network knows it' })),
  admin: Role,
});

const groupFields = {
  id: Type.Integer({ description: 'The gateway’s id of this (device, group) pair: the `{group_id}` of group routes' }),
  device: Nullable(Type.String({ description: 'The number of the device acting in this group' })),
  device_id: Type.Integer(),
  network_id: Type.String({ description: 'The network’s id of the group' }),
  subject: Type.String({ description: 'The group’s name' }),
  description: Nullable(Type.String()),
  participant_count: Type.Integer(),
  capacity: Type.Integer({ description: 'Maximum members (1024)' }),
  device_admin: Role,
  created_at: Type.String({ format: 'date-time' }),
  synced_at: Type.String({ format: 'date-time', description: 'When the network last reported this group' }),
  jid: Type.String({ description: 'The network’s id of the group (the same as `network_id`); usable as `{group_id}`' }),
  title: Type.String({ description: 'The group’s name (the same as `subject`)' }),
  permissions: Nullable(
    Type.Object(
      {
        only_admins_can_send: Type.Boolean({ description: 'Only admins may post' }),
        only_admins_can_edit: Type.Boolean({ description: 'Only admins may change the group’s info' }),
      },
      { description: 'As the network last reported them; null until it has' },
    ),
  ),
  disappearing_messages: Nullable(
    Type.Object(
      {
        enabled: Type.Boolean(),
        duration: Nullable(
          Type.Union(
            Object.keys(DISAPPEARING_DURATIONS).map((d) => Type.Literal(d)),
            { description: 'null when off, or a timer the API has no name for' },
          ),
        ),
      },
      { description: 'As the network last reported it; null until it has' },
    ),
  ),
};

export const GroupSchema = Type.Object(groupFields, { title: 'Group' });
export const GroupDetailSchema = Type.Object(
  { ...groupFields, participants: Type.Array(ParticipantSchema) },
  { title: 'GroupDetail' },
);

export type GroupJson = Static<typeof GroupSchema>;
export type GroupDetailJson = Static<typeof GroupDetailSchema>;
export type ParticipantJson = Static<typeof ParticipantSchema>;

/** How participants are stored in `groups.participants`. */
export interface StoredParticipant {
  readonly phone: string;
  readonly name?: string;
  readonly role: ParticipantRole;
}

export function parseParticipants(json: string): StoredParticipant[] {
  try {
    const value: unknown = JSON.parse(json);
    return Array.isArray(value) ? (value as StoredParticipant[]) : [];
  } catch {
    return [];
  }
}

export function presentGroup(row: GroupRow, devicePhone: string | null): GroupJson {
  return {
    id: row.id,
    device: devicePhone,
    device_id: row.device_id,
    network_id: row.network_id,
    subject: row.subject,
    description: row.description,
    participant_count: row.participant_count,
    capacity: row.capacity,
    device_admin: (row.device_admin ?? null) as GroupJson['device_admin'],
    created_at: iso(row.created_at),
    synced_at: iso(row.synced_at),
    jid: row.network_id,
    title: row.subject,
    permissions:
      row.only_admins_can_send === null || row.only_admins_can_edit === null
        ? null
        : {
            only_admins_can_send: row.only_admins_can_send === 1,
            only_admins_can_edit: row.only_admins_can_edit === 1,
          },
    disappearing_messages:
      row.disappearing_seconds === null
        ? null
        : {
            enabled: row.disappearing_seconds > 0,
            duration: row.disappearing_seconds > 0 ? durationOf(row.disappearing_seconds) : null,
          },
  };
}

export function presentGroupDetail(row: GroupRow, devicePhone: string | null): GroupDetailJson {
  return {
    ...presentGroup(row, devicePhone),
    participants: parseParticipants(row.participants).map((p) =>
      p.name === undefined ? { phone: p.phone, admin: p.role } : { phone: p.phone, name: p.name, admin: p.role },
    ),
  };
}

// --- spec 2.6 ---------------------------------------------------------------------------

export const AddedMemberSchema = Type.Object({
  phone: Type.String(),
  status: Type.Literal('added'),
  name: Type.Optional(Type.String()),
  added_at: Type.String({ format: 'date-time' }),
});

export const FailedMemberSchema = Type.Object({
  phone: Type.String(),
  status: Type.Literal('failed'),
  error: Type.String(),
  error_code: Type.Union(
    [
      'USER_NOT_FOUND',
      'USER_BLOCKED',
      'ALREADY_MEMBER',
      'PRIVACY_SETTINGS',
      'GROUP_FULL',
      'RATE_LIMITED',
      'INVALID_NUMBER',
    ].map((code) => Type.Literal(code)),
  ),
});

export const MembersAddResultSchema = Type.Object(
  {
    group_id: Type.String({ description: 'The group id of the path, as a string' }),
    group_name: Type.String(),
    added_members: Type.Array(AddedMemberSchema),
    failed_members: Type.Array(FailedMemberSchema),
    total_added: Type.Integer(),
    total_failed: Type.Integer(),
    new_participant_count: Type.Integer({ description: 'Group size after the operation' }),
  },
  { title: 'MembersAddResult' },
);

/** `POST /groups`: the group created, and who it was created without (the same items as `failed_members`). */
export const CreatedGroupSchema = Type.Object(
  {
    ...groupFields,
    participants: Type.Array(ParticipantSchema),
    failed_participants: Type.Array(FailedMemberSchema, {
      description: 'Requested participants the network did not add, each with why (codes as for members add)',
    }),
  },
  { title: 'CreatedGroup' },
);

export type CreatedGroupJson = Static<typeof CreatedGroupSchema>;
export type AddedMember = Static<typeof AddedMemberSchema>;
export type FailedMember = Static<typeof FailedMemberSchema>;
export type MembersAddResult = Static<typeof MembersAddResultSchema>;
