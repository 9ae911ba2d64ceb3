/**
 * A form opened on a page as a card ("Add device", "New group", "Join a group", "New webhook"): focus on its first
 * field when it appears, Escape or Cancel closes it, and submitting sends once at a time with the API's answer
 * (its message, and per field through `failure`) shown in the form.
 *
 * Owns: the form's sending state and its closing controls. Must never: say a change was made that the API did not
 * answer as made (the caller's `onSubmit` decides what success does).
 */
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { ApiFailure } from './api';
import { useOpenedForm } from './hooks';
import { ErrorNotice } from './ui';

export interface Submission {
  /** What the last submission failed with (null while none failed). */
  error: unknown;
  /** The API's answer to the last submission when it refused it: `failure?.forField(name)` for a field's messages. */
  failure: ApiFailure | null;
  busy: boolean;
  /** Runs `send` with the submit button disabled; a failure is kept in `error`. */
  run(send: () => Promise<void>): Promise<void>;
}

export function useSubmission(): Submission {
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  return {
    error,
    failure: error instanceof ApiFailure ? error : null,
    busy,
    async run(send) {
      setBusy(true);
      setError(null);
      try {
        await send();
      } catch (failure) {
        setError(failure);
      } finally {
        setBusy(false);
      }
    },
  };
}

export function FormCard({
  label,
  submitLabel,
  submission,
  onSubmit,
  onCancel,
  children,
}: {
  label: string;
  submitLabel: string;
  submission: Submission;
  onSubmit: () => Promise<void>;
  onCancel: () => void;
  children: ComponentChildren;
}) {
  const opened = useOpenedForm(onCancel);
  return (
    <form
      class="card"
      aria-label={label}
      {...opened}
      onSubmit={async (e) => {
        e.preventDefault();
        await submission.run(onSubmit);
      }}
    >
      {children}
      <ErrorNotice error={submission.error} />
      <div class="buttons">
        <button type="submit" disabled={submission.busy}>
          {submitLabel}
        </button>
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}
