/**
 * Administering a group from the dashboard (docs/groups.md, Administering a group): the outcome of removing,
 * promoting or demoting per participant, the invite link (show, copy, revoke), joining by a link or its code,
 * and leaving (asked first).
 *
 * Owns: what these pieces show and which route each calls. Must never: put a token in a link, or say a change
 * was made that the API did not answer as made.
 */
import { useState } from 'preact/hooks';
import { call, type Device, type GroupDetail, type ParticipantsChange } from '../api';
import { navigate } from '../hooks';
import { ConfirmButton, CopyButton, ErrorNotice, Field, Notice } from '../ui';
import { FormCard, useSubmission } from '../form-card';

export type MemberAction = 'remove' | 'promote' | 'demote';

const DONE: Record<MemberAction, string> = { remove: 'removed', promote: 'promoted', demote: 'demoted' };

/** What each per-participant failure means, in words (the code beside it). */
const REASONS: Record<ParticipantsChange['failed'][number]['error_code'], string> = {
  NOT_A_MEMBER: 'not in the group',
  INVALID_NUMBER: 'not a valid number',
  FORBIDDEN: 'the group’s creator: cannot be removed or demoted',
};

/** One row per participant of a change: its phone, what became of it, and why when it failed. */
export function OutcomeTable({
  rows,
}: {
  rows: Array<{ key: string; phone: string; outcome: string; reason: string }>;
}) {
  return (
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
        {rows.map((r) => (
          <tr key={r.key}>
            <th scope="row">{r.phone}</th>
            <td>{r.outcome}</td>
            <td>{r.reason}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** The answer of a remove, promote or demote: the API's message, then one row per participant. */
export function ChangeOutcome({
  action,
  message,
  data,
}: {
  action: MemberAction;
  message: string;
  data: ParticipantsChange;
}) {
  return (
    <div role="status">
      <p>
        {message}: {data.succeeded.length} {DONE[action]}, {data.failed.length} failed.
      </p>
      <OutcomeTable
        rows={[
          ...data.succeeded.map((phone) => ({ key: `s${phone}`, phone, outcome: DONE[action], reason: '' })),
          ...data.failed.map((f) => ({
            key: `f${f.phone}`,
            phone: f.phone,
            outcome: 'failed',
            reason: `${REASONS[f.error_code] ?? f.error_code} (${f.error_code})`,
          })),
        ]}
      />
    </div>
  );
}

/** The group's invite link: read only when asked (an administrator's), copied, or revoked for a new one. */
export function InviteLinkCard({ groupId }: { groupId: string }) {
  const [link, setLink] = useState<string | null>(null);
  const [notice, setNotice] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const path = `/groups/${encodeURIComponent(groupId)}/invite-link`;
  const ask = async (method: 'GET' | 'POST', url: string) => {
    setBusy(true);
    setError(null);
    setNotice('');
    try {
      const answer = await call<{ invite_link: string }>(method, url);
      setLink(answer.data.invite_link);
      setNotice(answer.message);
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };
  return (
    <section class="card" aria-labelledby="invite-title">
      <h2 id="invite-title">Invite link</h2>
      <p class="hint">
        Anyone with the link can join the group. Revoking it makes a new one; the old one stops working.
      </p>
      {link !== null && (
        <p>
          <code aria-label="Current invite link">{link}</code>
        </p>
      )}
      <div class="buttons">
        {link === null ? (
          <button type="button" disabled={busy} onClick={() => void ask('GET', path)}>
            Show invite link
          </button>
        ) : (
          <CopyButton value={link} label="Copy invite link" />
        )}
        <ConfirmButton
          label="Revoke link"
          question="Revoke the invite link? Whoever has it can no longer join with it."
          confirmLabel="Yes, revoke"
          disabled={busy}
          onConfirm={() => ask('POST', `${path}/revoke`)}
        />
      </div>
      {notice !== '' && <Notice>{notice}.</Notice>}
      <ErrorNotice error={error} />
    </section>
  );
}

/** What the group list says once after the device left a group (the page it was on is gone). */
let leftNotice: string | null = null;

/** The notice of the group just left, once. */
export function takeLeftNotice(): string | null {
  const notice = leftNotice;
  leftNotice = null;
  return notice;
}

export function LeaveGroupCard({ device, group, groupId }: { device: Device; group: GroupDetail; groupId: string }) {
  const [error, setError] = useState<unknown>(null);
  return (
    <section class="card" aria-labelledby="leave-title">
      <h2 id="leave-title">Leave</h2>
      <p class="hint">
        {device.name} stops being a member: the group leaves this list; it can join again with an invite link.
      </p>
      <ConfirmButton
        label="Leave group"
        question={`Leave “${group.subject}”?`}
        confirmLabel="Yes, leave"
        onConfirm={async () => {
          setError(null);
          try {
            const answer = await call<null>('POST', `/groups/${encodeURIComponent(groupId)}/leave`);
            leftNotice = `${answer.message}: ${group.subject}.`;
            navigate(`/devices/${device.id}/groups`);
          } catch (failure) {
            setError(failure);
          }
        }}
      />
      <ErrorNotice error={error} />
    </section>
  );
}

/** Joining a group with an invite link (or its bare code) someone shared. */
export function JoinGroupForm({
  devicePhone,
  onJoined,
  onCancel,
}: {
  devicePhone: string;
  onJoined: (group: GroupDetail, message: string) => void;
  onCancel: () => void;
}) {
  const [invite, setInvite] = useState('');
  const submission = useSubmission();
  const { failure } = submission;
  return (
    <FormCard
      label="Join a group"
      submitLabel="Join group"
      submission={submission}
      onCancel={onCancel}
      onSubmit={async () => {
        const answer = await call<GroupDetail>('POST', '/groups/join', {
          device: devicePhone,
          invite: invite.trim(),
        });
        onJoined(answer.data, answer.message);
      }}
    >
      <Field
        label="Invite link or code"
        value={invite}
        onValue={setInvite}
        required
        hint="A link https://chat.whatsapp.com/… as shared, or the code at its end."
        errors={failure?.forField('invite')}
      />
    </FormCard>
  );
}
