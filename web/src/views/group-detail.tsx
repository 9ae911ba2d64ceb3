/**
 * One group of a device: its participants and roles, and (when the device is an
 * administrator) choosing participants to remove, promote or demote with the
 * outcome per participant; adding members; the invite link and leaving
 * (group-admin.tsx). Numbers are taken as people write them (src/phone-number.ts).
 *
 * Must never: decide who may do what: the API answers `403 Access denied` and the page shows it.
 */
import { useState } from 'preact/hooks';
import { ApiFailure, call, type Device, type GroupDetail, type MembersResult, type ParticipantsChange } from '../api';
import { splitPhoneList } from '../../../src/phone-number';
import { usePolling } from '../hooks';
import { ConfirmButton, DataTable, ErrorNotice } from '../ui';
import { ChangeOutcome, InviteLinkCard, LeaveGroupCard, OutcomeTable, type MemberAction } from './group-admin';

export function GroupDetailView({ device, groupId }: { device: Device; groupId: string }) {
  const [group, setGroup] = useState<GroupDetail | null>(null);
  const [error, setError] = useState<unknown>(null);
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
  const admin = group !== null && group.device_admin !== null;

  return (
    <div class="grid">
      <section class="card wide" aria-labelledby="group-title">
        <p class="crumbs">
          <a href={`#/devices/${device.id}/groups`}>All groups of {device.name}</a>
        </p>
        <h2 id="group-title">{group?.subject ?? `Group ${groupId}`}</h2>
        <ErrorNotice error={error} />
        {group !== null && <Participants group={group} groupId={groupId} admin={admin} onChanged={load} />}
      </section>
      <AddMembers groupId={groupId} onChanged={load} />
      {group !== null && admin && <InviteLinkCard groupId={groupId} />}
      {group !== null && <LeaveGroupCard device={device} group={group} groupId={groupId} />}
    </div>
  );
}

const ACTIONS: ReadonlyArray<{ action: MemberAction; label: string }> = [
  { action: 'promote', label: 'Make admin' },
  { action: 'demote', label: 'Make member' },
];

function Participants({
  group,
  groupId,
  admin,
  onChanged,
}: {
  group: GroupDetail;
  groupId: string;
  admin: boolean;
  onChanged: () => Promise<void>;
}) {
  const [selected, setSelected] = useState<string[]>([]);
  const [outcome, setOutcome] = useState<{ action: MemberAction; message: string; data: ParticipantsChange } | null>(
    null,
  );
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  // A participant who left (removed, or by the poll) is no longer selectable.
  const chosen = selected.filter((phone) => group.participants.some((p) => p.phone === phone));

  const change = async (action: MemberAction) => {
    setBusy(true);
    setError(null);
    setOutcome(null);
    try {
      const answer = await call<ParticipantsChange>(
        'POST',
        `/groups/${encodeURIComponent(groupId)}/members/${action}`,
        { participants: chosen },
      );
      setOutcome({ action, message: answer.message, data: answer.data });
      setSelected([]);
      await onChanged();
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };

  return (
    <>
      <DataTable
        label="Participants table"
        caption={
          <>
            {group.participant_count} participants; this device is {group.device_admin ?? 'a member'}
          </>
        }
        columns={[...(admin ? [<span class="sr-only">Selected</span>] : []), 'Phone', 'Name', 'Role']}
      >
        {group.participants.map((p) => (
          <tr key={p.phone}>
            {admin && (
              <td>
                <input
                  type="checkbox"
                  aria-label={`Select ${p.phone}`}
                  checked={chosen.includes(p.phone)}
                  onChange={(e) => {
                    const on = (e.target as HTMLInputElement).checked;
                    setSelected((s) => (on ? [...s, p.phone] : s.filter((x) => x !== p.phone)));
                  }}
                />
              </td>
            )}
            <th scope="row">{p.phone}</th>
            <td>{p.name ?? ''}</td>
            <td>{p.admin ?? 'member'}</td>
          </tr>
        ))}
      </DataTable>
      {admin ? (
        <div class="buttons" role="group" aria-label="Change the selected participants">
          <span class="hint">{chosen.length} selected</span>
          {ACTIONS.map(({ action, label }) => (
            <button
              key={action}
              type="button"
              disabled={busy || chosen.length === 0}
              onClick={() => void change(action)}
            >
              {label}
            </button>
          ))}
          <ConfirmButton
            label="Remove from group"
            question={`Remove ${chosen.length === 1 ? chosen[0] : `${chosen.length} participants`} from the group?`}
            confirmLabel="Yes, remove"
            disabled={busy || chosen.length === 0}
            onConfirm={() => change('remove')}
          />
        </div>
      ) : (
        <p class="hint">Only a group’s administrators can remove, promote or demote members and see its invite link.</p>
      )}
      <ErrorNotice error={error} />
      {outcome !== null && <ChangeOutcome {...outcome} />}
    </>
  );
}

function AddMembers({ groupId, onChanged }: { groupId: string; onChanged: () => Promise<void> }) {
  const [numbers, setNumbers] = useState('');
  const [result, setResult] = useState<{ message: string; data: MembersResult } | null>(null);
  const [addError, setAddError] = useState<unknown>(null);
  const fieldErrors = addError instanceof ApiFailure ? addError.forField('participants') : [];
  return (
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
          await onChanged();
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
          <OutcomeTable
            rows={[
              ...result.data.added_members.map((m) => ({
                key: `a${m.phone}`,
                phone: m.phone,
                outcome: 'added',
                reason: '',
              })),
              ...result.data.failed_members.map((m) => ({
                key: `f${m.phone}`,
                phone: m.phone,
                outcome: 'failed',
                reason: `${m.error} (${m.error_code})`,
              })),
            ]}
          />
        </div>
      )}
    </form>
  );
}
