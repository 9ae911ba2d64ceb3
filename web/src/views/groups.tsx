/**
 * A device's groups: the list, creating one (name and members) and joining one
 * by an invite link; one group's page is group-detail.tsx. Numbers are taken as
 * people write them (src/phone-number.ts).
 */
import { useState } from 'preact/hooks';
import { call, type CreatedGroup, type Device, type Group, type GroupDetail } from '../api';
import { splitPhoneList } from '../../../src/phone-number';
import { useDisclosure, usePolling } from '../hooks';
import { DataTable, ErrorNotice, Field, Notice } from '../ui';
import { FormCard, useSubmission } from '../form-card';
import { GroupDetailView } from './group-detail';
import { JoinGroupForm, takeLeftNotice } from './group-admin';

export function GroupsView({ device, groupId }: { device: Device; groupId: string | undefined }) {
  if (groupId !== undefined) return <GroupDetailView device={device} groupId={groupId} />;
  return <GroupList device={device} />;
}

function GroupList({ device }: { device: Device }) {
  const [groups, setGroups] = useState<Group[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const creating = useDisclosure();
  const joining = useDisclosure();
  const [created, setCreated] = useState<CreatedGroup | null>(null);
  // Said once: the group this device just left (its page is gone).
  const [notice, setNotice] = useState<string | null>(takeLeftNotice);
  const [joined, setJoined] = useState<{ group: GroupDetail; message: string } | null>(null);
  const load = async () => {
    if (device.phone === null) return setGroups([]);
    try {
      const answer = await call<Group[]>('GET', `/groups?device=${encodeURIComponent(device.phone)}`);
      setGroups(answer.data);
      setError(null);
    } catch (failure) {
      setError(failure);
    }
  };
  usePolling(load, 3000, [device.phone]);
  return (
    <section class="card wide" aria-labelledby="groups-title">
      <div class="title-row">
        <h2 id="groups-title">Groups</h2>
        {device.phone !== null && (
          <div class="buttons">
            <button
              type="button"
              ref={creating.opener}
              aria-expanded={creating.open}
              onClick={() => {
                setCreated(null);
                setNotice(null);
                setJoined(null);
                creating.toggle();
              }}
            >
              New group
            </button>
            <button
              type="button"
              ref={joining.opener}
              aria-expanded={joining.open}
              onClick={() => {
                setCreated(null);
                setNotice(null);
                setJoined(null);
                joining.toggle();
              }}
            >
              Join a group
            </button>
          </div>
        )}
      </div>
      {joining.open && device.phone !== null && (
        <JoinGroupForm
          devicePhone={device.phone}
          onJoined={(group, message) => {
            setJoined({ group, message });
            joining.close();
            void load();
          }}
          onCancel={joining.close}
        />
      )}
      {notice !== null && <Notice>{notice}</Notice>}
      {joined !== null && (
        <Notice>
          {joined.message}: <a href={`#/devices/${device.id}/groups/${joined.group.id}`}>{joined.group.subject}</a>,
          with {joined.group.participant_count} members.
        </Notice>
      )}
      {creating.open && device.phone !== null && (
        <CreateGroup
          devicePhone={device.phone}
          onCreated={(group) => {
            setCreated(group);
            creating.close();
            void load();
          }}
          onCancel={creating.close}
        />
      )}
      {created !== null && (
        <Notice>
          Group created: <a href={`#/devices/${device.id}/groups/${created.id}`}>{created.subject}</a>, with{' '}
          {created.participant_count} members.
          {created.failed_participants.length > 0 &&
            ` Not added: ${created.failed_participants.map((f) => `${f.phone} (${f.error_code})`).join(', ')}.`}
        </Notice>
      )}
      <ErrorNotice error={error} />
      {groups === null ? (
        <p aria-busy="true">Loading groups…</p>
      ) : groups.length === 0 ? (
        <p>
          {device.phone === null
            ? 'Pair the device first: groups come from the network.'
            : 'This device is in no group yet: create one, or join one from the phone (groups come from the network).'}
        </p>
      ) : (
        <DataTable label="Groups table" columns={['Group', 'Members', 'This device’s role']}>
          {groups.map((g) => (
            <tr key={g.id}>
              <th scope="row">
                <a href={`#/devices/${device.id}/groups/${g.id}`}>{g.subject}</a>
              </th>
              <td>{g.participant_count}</td>
              <td>{g.device_admin ?? 'member'}</td>
            </tr>
          ))}
        </DataTable>
      )}
    </section>
  );
}

function CreateGroup({
  devicePhone,
  onCreated,
  onCancel,
}: {
  devicePhone: string;
  onCreated: (group: CreatedGroup) => void;
  onCancel: () => void;
}) {
  const [name, setName] = useState('');
  const [members, setMembers] = useState('');
  const submission = useSubmission();
  const { failure } = submission;
  const memberErrors = failure?.forField('participants') ?? [];
  return (
    <FormCard
      label="New group"
      submitLabel="Create group"
      submission={submission}
      onCancel={onCancel}
      onSubmit={async () => {
        const answer = await call<CreatedGroup>('POST', '/groups', {
          device: devicePhone,
          name,
          participants: splitPhoneList(members),
        });
        onCreated(answer.data);
      }}
    >
      <Field
        label="Group name"
        value={name}
        onValue={setName}
        required
        maxLength={100}
        errors={failure?.forField('name')}
      />
      <div class="field">
        <label for="new-group-members">Members</label>
        <textarea
          id="new-group-members"
          rows={4}
          value={members}
          onInput={(e) => setMembers((e.target as HTMLTextAreaElement).value)}
          aria-describedby={`new-group-members-hint${memberErrors.length > 0 ? ' new-group-members-err' : ''}`}
          aria-invalid={memberErrors.length > 0 || undefined}
        />
        <small id="new-group-members-hint" class="hint">
          Phone numbers, country code first (e.g. +62 812-3456-7890), one per line or separated by commas. This device
          joins as the group’s superadmin.
        </small>
        {memberErrors.length > 0 && (
          <small id="new-group-members-err" class="field-error" role="alert">
            {memberErrors.join('; ')}
          </small>
        )}
      </div>
    </FormCard>
  );
}
