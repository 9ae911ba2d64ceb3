/**
 * What a user can do to one message from the messages page (DECISIONS 15): react (or take the reaction away), edit
 * an own sent text or caption, cancel or delete an own message, mark an incoming one read. Each calls its REST route;
 * the answer (the message object) replaces the row, the API's message is shown, and a refusal shows the API's error.
 *
 * Owns: which actions a message offers and their calls. Must never: decide what the API allows beyond hiding what
 * cannot apply (an edit after 15 minutes is offered and refused by the API, in its own words).
 */
import { useRef, useState } from 'preact/hooks';
import { call, type Message } from '../api';
import { useDisclosure, useOpenedForm } from '../hooks';
import { ConfirmButton, ErrorNotice, Notice } from '../ui';

/** The choices offered; the API takes any single emoji. */
export const REACTIONS = ['👍', '❤️', '😂', '😮', '😢', '🙏'] as const;

/** Types whose text (chat) or caption (media) an edit replaces. */
const EDITABLE = new Set(['chat', 'image', 'video', 'file']);

export function MessageActions({
  message: m,
  devicePhone,
  onChanged,
}: {
  message: Message;
  devicePhone: string;
  onChanged: (message: Message) => void;
}) {
  const [said, setSaid] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  // One call at a time per message. Buttons stay enabled meanwhile: disabling the focused one would drop the focus.
  const running = useRef(false);
  /** Calls the route; true when it answered 200 (the row is then the answer). */
  const perform = async (method: 'POST' | 'PATCH' | 'DELETE', path: string, body?: unknown): Promise<boolean> => {
    if (running.current) return false;
    running.current = true;
    setBusy(true);
    setSaid(null);
    setError(null);
    try {
      const answer = await call<Message>(method, path, body);
      onChanged(answer.data);
      setSaid(answer.message);
      return true;
    } catch (failure) {
      setError(failure);
      return false;
    } finally {
      running.current = false;
      setBusy(false);
    }
  };
  const id = encodeURIComponent(m.id);
  const deleted = m.deleted_at !== undefined;
  const ours = m.direction === 'outgoing';
  const sent = m.status === 'sent' || m.status === 'delivered';
  const mine = m.reactions?.find((r) => r.from === devicePhone);

  return (
    <div class="message-actions" aria-busy={busy || undefined}>
      {!deleted && m.status !== 'failed' && (
        <ReactPicker
          mine={mine?.emoji ?? null}
          onPick={(emoji) => perform('POST', `/messages/${id}/reaction`, { emoji })}
        />
      )}
      {ours && sent && !deleted && EDITABLE.has(m.type) && (
        <EditForm current={m.message ?? ''} onSave={(text) => perform('PATCH', `/messages/${id}`, { text })} />
      )}
      {ours && !deleted && m.status !== 'failed' && (
        <ConfirmButton
          label={m.status === 'pending' ? 'Cancel message' : 'Delete for everyone'}
          question={m.status === 'pending' ? 'Cancel this message before it is sent?' : 'Delete it for everyone?'}
          confirmLabel={m.status === 'pending' ? 'Yes, cancel it' : 'Yes, delete it'}
          onConfirm={async () => {
            await perform('DELETE', `/messages/${id}`);
          }}
        />
      )}
      {!ours && m.read_at === null && (
        <button type="button" onClick={() => perform('POST', `/messages/${id}/read`)}>
          Mark read
        </button>
      )}
      {said !== null && <Notice>{said}</Notice>}
      <ErrorNotice error={error} />
    </div>
  );
}

/** The emoji choice opens after the React button; once a choice is sent or taken away, focus is on React again. */
function ReactPicker({ mine, onPick }: { mine: string | null; onPick: (emoji: string) => Promise<boolean> }) {
  const picker = useDisclosure();
  const pick = async (emoji: string) => {
    picker.close();
    await onPick(emoji);
  };
  return (
    <>
      <button ref={picker.opener} type="button" aria-expanded={picker.open} onClick={picker.toggle}>
        React
      </button>
      {picker.open && (
        <span
          class="picker"
          role="group"
          aria-label="Pick a reaction"
          onKeyDown={(e) => {
            if (e.key !== 'Escape') return;
            e.preventDefault();
            picker.close();
          }}
        >
          {REACTIONS.map((emoji) => (
            <button
              key={emoji}
              type="button"
              aria-label={`React with ${emoji}`}
              aria-pressed={mine === emoji}
              onClick={() => pick(emoji)}
            >
              {emoji}
            </button>
          ))}
        </span>
      )}
      {mine !== null && (
        <button
          type="button"
          onClick={async () => {
            await onPick('');
            // The button goes with the reaction: focus stays in the row, on React.
            picker.opener.current?.focus();
          }}
        >
          Take reaction away
        </button>
      )}
    </>
  );
}

function EditForm({ current, onSave }: { current: string; onSave: (text: string) => Promise<boolean> }) {
  const editor = useDisclosure();
  return (
    <>
      <button ref={editor.opener} type="button" aria-expanded={editor.open} onClick={editor.toggle}>
        Edit
      </button>
      {editor.open && (
        <EditFields
          current={current}
          onClose={editor.close}
          onSave={async (text) => {
            if (await onSave(text)) editor.close();
          }}
        />
      )}
    </>
  );
}

function EditFields({
  current,
  onClose,
  onSave,
}: {
  current: string;
  onClose: () => void;
  onSave: (text: string) => Promise<void>;
}) {
  const [text, setText] = useState(current);
  const form = useOpenedForm(onClose);
  return (
    <form
      ref={form.ref}
      class="edit"
      aria-label="Edit the message"
      onKeyDown={form.onKeyDown}
      onSubmit={async (e) => {
        e.preventDefault();
        await onSave(text);
      }}
    >
      <label>
        New text
        <textarea rows={2} value={text} onInput={(e) => setText((e.target as HTMLTextAreaElement).value)} />
      </label>
      <button type="submit">Save edit</button>
      <button type="button" onClick={onClose}>
        Cancel
      </button>
    </form>
  );
}
