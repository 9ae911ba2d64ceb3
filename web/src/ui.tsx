/**
 * Building blocks of every view: announced errors, labelled fields, buttons
 * that confirm, copy, and relative times. Each control carries its accessible
 * name here, so views cannot forget it.
 */
import type { ComponentChildren } from 'preact';
import { useId, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { normalisePhone } from '../../src/phone-number';
import { ApiFailure } from './api';

export function describeError(error: unknown): string {
  if (error instanceof ApiFailure) return error.describe();
  if (error instanceof Error) return error.message;
  return String(error);
}

/** An error, announced by screen readers as soon as it appears. */
export function ErrorNotice({ error }: { error: unknown }) {
  if (error === null || error === undefined) return null;
  return (
    <p role="alert" class="error">
      {describeError(error)}
    </p>
  );
}

export function Notice({ children }: { children: ComponentChildren }) {
  return (
    <p role="status" class="notice">
      {children}
    </p>
  );
}

interface InputProps {
  type?: 'text' | 'url' | 'tel';
  required?: boolean;
  maxLength?: number;
  inputMode?: 'text' | 'numeric' | 'decimal' | 'url' | 'tel';
  autoComplete?: string;
  onBlur?: () => void;
}

/** A text field with its label and, under it, the API's messages for the field it names. */
export function Field({
  label,
  value,
  onValue,
  errors = [],
  hint,
  type = 'text',
  ...rest
}: InputProps & {
  label: string;
  value: string;
  onValue: (value: string) => void;
  errors?: string[];
  hint?: string;
}) {
  const id = useId();
  const described = [errors.length > 0 ? `${id}-err` : '', hint !== undefined ? `${id}-hint` : '']
    .filter(Boolean)
    .join(' ');
  // Two literal branches: Preact's input types tell each `type` apart.
  const common = {
    id,
    value,
    onInput: (e: Event) => onValue((e.target as HTMLInputElement).value),
    'aria-invalid': errors.length > 0 ? true : undefined,
    'aria-describedby': described || undefined,
    ...rest,
  };
  return (
    <div class="field">
      <label for={id}>{label}</label>
      {type === 'url' ? (
        <input type="url" {...common} />
      ) : type === 'tel' ? (
        <input type="tel" {...common} />
      ) : (
        <input type="text" {...common} />
      )}
      {hint !== undefined && (
        <small id={`${id}-hint`} class="hint">
          {hint}
        </small>
      )}
      {errors.length > 0 && (
        <small id={`${id}-err`} class="field-error" role="alert">
          {errors.join('; ')}
        </small>
      )}
    </div>
  );
}

/**
 * A phone number field: the phone keypad (with `+`, spaces and dashes), and
 * the number as the API takes it once the field is left (`+62 898-1234-5678`
 * becomes `6289812345678`). Forms send `normalisePhone(value)` too, for a
 * value submitted with Enter before the field was left.
 */
export function PhoneField(props: {
  label: string;
  value: string;
  onValue: (value: string) => void;
  errors?: string[];
  hint?: string;
  required?: boolean;
}) {
  return (
    <Field
      {...props}
      type="tel"
      inputMode="tel"
      autoComplete="off"
      onBlur={() => props.onValue(normalisePhone(props.value))}
    />
  );
}

export function Select({
  label,
  value,
  onValue,
  options,
}: {
  label: string;
  value: string;
  onValue: (value: string) => void;
  options: ReadonlyArray<{ value: string; label: string }>;
}) {
  const id = useId();
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <select id={id} value={value} onChange={(e) => onValue((e.target as HTMLSelectElement).value)}>
        {options.map((o) => (
          <option key={o.value} value={o.value}>
            {o.label}
          </option>
        ))}
      </select>
    </div>
  );
}

/**
 * A button that asks before it acts: the first press shows the question with
 * "Yes, …" and "Cancel" buttons, and focus moves to the confirming one;
 * when the question closes (answered, Cancel or Escape) focus is back on the button.
 */
export function ConfirmButton({
  label,
  question,
  confirmLabel,
  onConfirm,
  disabled,
  danger = true,
}: {
  label: string;
  question: string;
  confirmLabel: string;
  onConfirm: () => void | Promise<void>;
  disabled?: boolean;
  danger?: boolean;
}) {
  const [asking, setAsking] = useState(false);
  const opener = useRef<HTMLButtonElement>(null);
  const confirm = useRef<HTMLButtonElement>(null);
  // Where focus goes when the question closes: back to the button that asked it (once, not on every render).
  const refocus = useRef(false);
  // Layout effect: focus moves in the same frame the buttons change, before the next key press.
  useLayoutEffect(() => {
    if (asking) confirm.current?.focus();
    else if (refocus.current) opener.current?.focus();
    refocus.current = false;
  }, [asking]);
  const close = () => {
    refocus.current = true;
    setAsking(false);
  };
  if (!asking) {
    return (
      <button
        ref={opener}
        type="button"
        class={danger ? 'danger' : ''}
        disabled={disabled}
        onClick={() => setAsking(true)}
      >
        {label}
      </button>
    );
  }
  return (
    <span
      class="confirm"
      role="group"
      aria-label={question}
      onKeyDown={(e) => {
        if (e.key !== 'Escape') return;
        e.preventDefault();
        close();
      }}
    >
      <span>{question}</span>
      <button
        ref={confirm}
        type="button"
        class="danger"
        onClick={async () => {
          close();
          await onConfirm();
        }}
      >
        {confirmLabel}
      </button>
      <button type="button" onClick={close}>
        Cancel
      </button>
    </span>
  );
}

/** Copies a value to the clipboard and says so. */
export function CopyButton({ value, label }: { value: string; label: string }) {
  const [copied, setCopied] = useState<'no' | 'yes' | 'failed'>('no');
  return (
    <>
      <button
        type="button"
        onClick={async () => {
          try {
            await navigator.clipboard.writeText(value);
            setCopied('yes');
          } catch {
            setCopied('failed');
          }
        }}
      >
        {label}
      </button>
      <span role="status" class="hint">
        {copied === 'yes' ? 'Copied' : copied === 'failed' ? 'Copy failed: select the text and copy it' : ''}
      </span>
    </>
  );
}

export function Time({ value }: { value: string | null | undefined }) {
  if (value === null || value === undefined) return <span class="muted">–</span>;
  const date = new Date(value);
  return (
    <time dateTime={value} title={date.toISOString()}>
      {date.toLocaleString()}
    </time>
  );
}

export function StatusBadge({ value }: { value: string }) {
  return <span class={`badge badge-${value.toLowerCase()}`}>{value}</span>;
}

/**
 * A table in a focusable, labelled region that scrolls sideways on a narrow screen (so keyboard users can scroll it
 * too): an optional caption (`hiddenCaption` for screen readers only), a header row of column names, then the rows.
 */
export function DataTable({
  label,
  caption,
  hiddenCaption,
  columns,
  children,
}: {
  label: string;
  caption?: ComponentChildren;
  hiddenCaption?: string;
  columns: ReadonlyArray<ComponentChildren>;
  children: ComponentChildren;
}) {
  return (
    <div class="table-wrap" tabIndex={0} role="region" aria-label={label}>
      <table>
        {hiddenCaption !== undefined && <caption class="sr-only">{hiddenCaption}</caption>}
        {caption !== undefined && <caption>{caption}</caption>}
        <thead>
          <tr>
            {columns.map((column, i) => (
              <th key={i} scope="col">
                {column}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>{children}</tbody>
      </table>
    </div>
  );
}
