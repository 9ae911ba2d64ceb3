// docs/groups.md, Events of changes seen on the network: the `changes` of `group.updated`, computed from the stored
// snapshot and the network's new one (src/groups/changes.ts).
import { describe, expect, it } from 'vitest';
import { groupChanges } from '../../src/groups/changes.js';
import type { GroupRow, GroupSnapshot } from '../../src/groups/repository.js';

const stored: GroupRow = {
  id: 7,
  account_id: 1,
  device_id: 2,
  network_id: '120363000000000001@g.us',
  subject: 'Team',
  description: null,
  participants: '[]',
  participant_count: 0,
  capacity: 1024,
  device_admin: 'admin',
  created_at: 0,
  synced_at: 0,
  left_at: null,
  only_admins_can_send: 0,
  only_admins_can_edit: 1,
  disappearing_seconds: 0,
  picture_id: null,
};
const same: GroupSnapshot = {
  network_id: stored.network_id,
  subject: 'Team',
  description: null,
  participants: '[{"phone":"6281","role":null}]',
  participant_count: 1,
  capacity: 1024,
  device_admin: 'admin',
  only_admins_can_send: 0,
  only_admins_can_edit: 1,
  disappearing_seconds: 0,
  picture_id: null,
};

describe('group changes', () => {
  it('is no change when only members differ', () => {
    expect(groupChanges(stored, same)).toBeNull();
  });

  it('names each changed field with its new value, as the group object does', () => {
    expect(
      groupChanges(stored, {
        ...same,
        subject: 'Team 2',
        description: 'Rules',
        only_admins_can_send: 1,
        disappearing_seconds: 86_400,
        picture_id: 'p1',
      }),
    ).toEqual({
      subject: 'Team 2',
      description: 'Rules',
      permissions: { only_admins_can_send: true, only_admins_can_edit: true },
      disappearing_messages: { enabled: true, duration: '24h' },
      picture: 'changed',
    });
  });

  it('takes a setting or picture the network did not report as no change', () => {
    const { picture_id: _none, ...unreported } = same;
    expect(groupChanges({ ...stored, picture_id: 'p1' }, unreported)).toBeNull();
    expect(groupChanges(stored, { ...same, only_admins_can_send: null, disappearing_seconds: null })).toBeNull();
    expect(groupChanges({ ...stored, picture_id: 'p1' }, same)).toEqual({ picture: 'changed' });
  });
});
