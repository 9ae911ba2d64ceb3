/**
 * A device's groups: the list, one group's participants and roles, and adding
 * members with the per-participant outcome shown after.
 */
import { useState } from 'preact/hooks';
import { ApiFailure, call, type Device, type Group, type GroupDetail, type MembersResult } from '../api';
import { usePolling } from '../hooks';
import { ErrorNotice } from '../ui';

export function GroupsView({ device, groupId }: { device: Device; groupId: string | undefined }) {
  if (groupId !== undefined) return <GroupDetailView device={device} groupId={groupId} />;
  return <GroupList device={device} />;
}

function GroupList({ device }: { device: Device }) {
  const [groups, setGroups] = useState<Group[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  usePolling(
    async () => {
      if (device.phone === null) return setGroups([]);
      try {
        const answer = await call<Group[]>('GET', `/groups?device=${encodeURIComponent(device.phone)}`);
        setGroups(answer.data);
        setError(null);
      } catch (failure) {
        setError(failure);
      }
    },
    3000,
    [device.phone],
  );
  return (
    <section class="card wide" aria-labelledby="groups-title">
      <h2 id="groups-title">Groups</h2>
      <ErrorNotice error={error} />
      {groups === null ? (
        <p aria-busy="true">Loading groups…</p>
      ) : groups.length === 0 ? (
        <p>
          {device.phone === null
            ? 'Pair the device first: groups come from the network.'
            : 'This device is in no group (groups come from the network when the device connects).'}
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
          const participants = numbers.split(/[\s,;]+/).filter(Boolean);
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
            Up to 20, separated by spaces, commas or new lines.
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
