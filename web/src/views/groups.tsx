/**
 * A device's groups: the list, creating one (name and members), one group's
 * participants and roles, and adding members with the per-participant outcome
 * shown after. Numbers are taken as people write them (src/phone-number.ts).
 */
import { useState } from 'preact/hooks';
import {
  ApiFailure,
  call,
  type CreatedGroup,
  type Device,
  type Group,
  type GroupDetail,
  type MembersResult,
} from '../api';
import { splitPhoneList } from '../../../src/phone-number';
import { useDisclosure, useOpenedForm, usePolling } from '../hooks';
import { ErrorNotice, Field, Notice } from '../ui';

export function GroupsView({ device, groupId }: { device: Device; groupId: string | undefined }) {
  if (groupId !== undefined) return <GroupDetailView device={device} groupId={groupId} />;
  return <GroupList device={device} />;
}

function GroupList({ device }: { device: Device }) {
  const [groups, setGroups] = useState<Group[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const creating = useDisclosure();
  const [created, setCreated] = useState<CreatedGroup | null>(null);
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
          <button
            type="button"
            ref={creating.opener}
            aria-expanded={creating.open}
            onClick={() => {
              setCreated(null);
              creating.toggle();
            }}
          >
            New group
          </button>
        )}
      </div>
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
        <div class="table-wrap" tabIndex={0} role="region" aria-label="Groups table">
          <table>
            <thead>
              <tr>
                <th scope="col">Group</th>
                <th scope="col">Members</th>
                <th scope="col">This device’s role</th>
              </tr>
            </thead>
            <tbody>
              {groups.map((g) => (
                <tr key={g.id}>
                  <th scope="row">
                    <a href={`#/devices/${device.id}/groups/${g.id}`}>{g.subject}</a>
                  </th>
                  <td>{g.participant_count}</td>
                  <td>{g.device_admin ?? 'member'}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
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
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const opened = useOpenedForm(onCancel);
  const failure = error instanceof ApiFailure ? error : null;
  const memberErrors = failure?.forField('participants') ?? [];
  return (
    <form
      class="card"
      aria-label="New group"
      {...opened}
      onSubmit={async (e) => {
        e.preventDefault();
        setBusy(true);
        setError(null);
        try {
          const answer = await call<CreatedGroup>('POST', '/groups', {
            device: devicePhone,
            name,
            participants: splitPhoneList(members),
          });
          onCreated(answer.data);
        } catch (failure) {
          setError(failure);
        } finally {
          setBusy(false);
        }
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
      <ErrorNotice error={error} />
      <div class="buttons">
        <button type="submit" disabled={busy}>
          Create group
        </button>
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}

function GroupDetailView({ device, groupId }: { device: Device; groupId: string }) {
  const [group, setGroup] = useState<GroupDetail | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [numbers, setNumbers] = useState('');
  const [result, setResult] = useState<{ message: string; data: MembersResult } | null>(null);
  const [addError, setAddError] = useState<unknown>(null);
  const load = async () => {
    try {
      const answer = await call<GroupDetail>('GET', `/groups/${encodeURIComponent(groupId)}`);
      setGroup(answer.data);
      setError(null);
    } catch (failure) {
      setError(failure);
    }
  };
  usePolling(load, 3000, [groupId]);
  const fieldErrors = addError instanceof ApiFailure ? addError.forField('participants') : [];

  return (
    <div class="grid">
      <section class="card wide" aria-labelledby="group-title">
        <p class="crumbs">
          <a href={`#/devices/${device.id}/groups`}>All groups of {device.name}</a>
        </p>
        <h2 id="group-title">{group?.subject ?? `Group ${groupId}`}</h2>
        <ErrorNotice error={error} />
        {group !== null && (
          <div class="table-wrap" tabIndex={0} role="region" aria-label="Participants table">
            <table>
              <caption>
                {group.participant_count} participants; this device is {group.device_admin ?? 'a member'}
              </caption>
              <thead>
                <tr>
                  <th scope="col">Phone</th>
                  <th scope="col">Name</th>
                  <th scope="col">Role</th>
                </tr>
              </thead>
              <tbody>
                {group.participants.map((p) => (
                  <tr key={p.phone}>
                    <th scope="row">{p.phone}</th>
                    <td>{p.name ?? ''}</td>
                    <td>{p.admin ?? 'member'}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
      <form
        class="card"
        aria-label="Add members"
        onSubmit={async (e) => {
          e.preventDefault();
          setAddError(null);
          setResult(null);
          const participants = splitPhoneList(numbers);
          try {
            const answer = await call<MembersResult>('POST', `/api/groups/${encodeURIComponent(groupId)}/members/add`, {
              participants,
            });
            setResult({ message: answer.message, data: answer.data });
            setNumbers('');
            await load();
          } catch (failure) {
            setAddError(failure);
          }
        }}
      >
        <h2>Add members</h2>
        <div class="field">
          <label for="add-members">Phone numbers to add</label>
          <textarea
            id="add-members"
            rows={4}
            value={numbers}
            onInput={(e) => setNumbers((e.target as HTMLTextAreaElement).value)}
            aria-describedby="add-members-hint"
            aria-invalid={fieldErrors.length > 0 || undefined}
          />
          <small id="add-members-hint" class="hint">
            Up to 20, one per line or separated by commas; country code first (e.g. +62 812-3456-7890).
          </small>
          {fieldErrors.length > 0 && (
            <small class="field-error" role="alert">
              {fieldErrors.join('; ')}
            </small>
          )}
        </div>
        <button type="submit">Add members</button>
        <ErrorNotice error={addError} />
        {result !== null && (
          <div role="status">
            <p>
              {result.message}: {result.data.total_added} added, {result.data.total_failed} failed; the group now has{' '}
              {result.data.new_participant_count} members.
            </p>
            <table>
              <caption>Outcome per participant</caption>
              <thead>
                <tr>
                  <th scope="col">Phone</th>
                  <th scope="col">Outcome</th>
                  <th scope="col">Reason</th>
                </tr>
              </thead>
              <tbody>
                {result.data.added_members.map((m) => (
                  <tr key={`a${m.phone}`}>
                    <th scope="row">{m.phone}</th>
                    <td>added</td>
                    <td />
                  </tr>
                ))}
                {result.data.failed_members.map((m) => (
                  <tr key={`f${m.phone}`}>
                    <th scope="row">{m.phone}</th>
                    <td>failed</td>
                    <td>
                      {m.error} ({m.error_code})
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </form>
    </div>
  );
}
