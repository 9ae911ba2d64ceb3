/**
 * A device's messages, newest first, with their status and timestamps,
 * filtered by status, read or unread, and direction, more loaded by cursor;
 * each with its content (message-content.tsx: media, reactions, edits, deletes,
 * polls) and its actions (message-actions.tsx), whose answers replace the row;
 * and a form that sends a test message, with the API's errors next to the
 * fields they name.
 */
import { useState } from 'preact/hooks';
import { ApiFailure, call, type Device, type GatewayInfo, type Message } from '../api';
import { useHasRoute, usePolling } from '../hooks';
import { normalisePhone } from '../../../src/phone-number';
import { ErrorNotice, Field, Notice, Select, StatusBadge, Time } from '../ui';
import { MessageActions } from './message-actions';
import { MessageContent } from './message-content';

const PAGE = 20;
const COLUMNS = ['Time', 'Direction', 'Peer', 'Type', 'Content', 'Status', 'Progress', 'Actions'] as const;

export function MessagesView({ device, info }: { device: Device; info: GatewayInfo }) {
  const [status, setStatus] = useState('');
  const [direction, setDirection] = useState('');
  const [read, setRead] = useState('');
  const [messages, setMessages] = useState<Message[] | null>(null);
  const [older, setOlder] = useState<Message[]>([]);
  const [cursor, setCursor] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  // A sender's number opens its contact card where the gateway has the route.
  const contacts = useHasRoute('/contacts/{phone}') === true;
  // Bumped by an action's answer: the first page is read again at once (marking one read marks earlier ones too).
  const [version, setVersion] = useState(0);

  const query = (more: string) => {
    const params = new URLSearchParams({ limit: String(PAGE) });
    if (device.phone !== null) params.set('device', device.phone);
    if (status !== '') params.set('status', status);
    if (direction !== '') params.set('direction', direction);
    if (read !== '') params.set('read', String(read === 'read'));
    return `/messages?${params.toString()}${more}`;
  };

  // The first page is refreshed every 3 s (statuses move); pages loaded by cursor are kept as they came.
  usePolling(
    async () => {
      if (device.phone === null) return setMessages([]);
      try {
        const answer = await call<Message[]>('GET', query(''));
        setMessages(answer.data);
        if (older.length === 0) setCursor(answer.next_cursor ?? null);
        setError(null);
      } catch (failure) {
        setError(failure);
      }
    },
    3000,
    [device.phone, status, direction, read, older.length, version],
  );

  const filter = (set: (v: string) => void) => (value: string) => {
    set(value);
    setOlder([]);
    setCursor(null);
    setMessages(null);
  };

  const rows = [...(messages ?? []), ...older.filter((o) => !(messages ?? []).some((m) => m.id === o.id))];
  // An action's answer is the message as it is now: it replaces the row, and the first page is read again.
  const changed = (next: Message) => {
    const swap = (list: Message[]) => list.map((m) => (m.id === next.id ? next : m));
    setMessages((list) => (list === null ? list : swap(list)));
    setOlder(swap);
    setVersion((v) => v + 1);
  };

  return (
    <div class="grid messages">
      <SendForm device={device} info={info} />
      <section class="card wide" aria-labelledby="messages-title">
        <h2 id="messages-title">Messages</h2>
        {device.phone === null ? (
          <p>This device has no number yet: pair it first.</p>
        ) : (
          <>
            <div class="filters">
              <Select
                label="Status"
                value={status}
                onValue={filter(setStatus)}
                options={[
                  { value: '', label: 'Any status' },
                  ...['pending', 'sent', 'delivered', 'failed'].map((s) => ({ value: s, label: s })),
                ]}
              />
              <Select
                label="Read"
                value={read}
                onValue={filter(setRead)}
                options={[
                  { value: '', label: 'Read or not' },
                  { value: 'read', label: 'Read' },
                  { value: 'unread', label: 'Unread' },
                ]}
              />
              <Select
                label="Direction"
                value={direction}
                onValue={filter(setDirection)}
                options={[
                  { value: '', label: 'Both directions' },
                  { value: 'outgoing', label: 'Outgoing' },
                  { value: 'incoming', label: 'Incoming' },
                ]}
              />
            </div>
            <ErrorNotice error={error} />
            {messages === null ? (
              <p aria-busy="true">Loading messages…</p>
            ) : rows.length === 0 ? (
              <p>No messages match.</p>
            ) : (
              // On a narrow screen each message is a block of labelled lines (styles.css, `.stack`); the explicit
              // roles keep it a table for assistive technology whatever its display.
              <div class="table-wrap stack" tabIndex={0} role="region" aria-label="Messages table">
                <table role="table">
                  <caption class="sr-only">Messages, newest first</caption>
                  <thead role="rowgroup">
                    <tr role="row">
                      {COLUMNS.map((c) => (
                        <th key={c} scope="col" role="columnheader">
                          {c}
                        </th>
                      ))}
                    </tr>
                  </thead>
                  <tbody role="rowgroup">
                    {rows.map((m) => (
                      <tr key={m.id} role="row">
                        <td role="cell" data-label="Time">
                          <Time value={m.timestamp} />
                        </td>
                        <td role="cell" data-label="Direction">
                          {m.direction}
                        </td>
                        <td role="cell" data-label="Peer">
                          {m.direction === 'incoming' && contacts && m.sender !== null && /^\d+$/.test(m.sender) ? (
                            <a href={`#/devices/${device.id}/contacts/${m.sender}`} title="Contact card">
                              {m.sender}
                            </a>
                          ) : m.direction === 'incoming' ? (
                            (m.sender ?? '')
                          ) : (
                            m.receiver
                          )}
                        </td>
                        <td role="cell" data-label="Type">
                          {m.type}
                        </td>
                        <td role="cell" data-label="Content" class="text">
                          <MessageContent message={m} />
                        </td>
                        <td role="cell" data-label="Status">
                          <StatusBadge value={m.read_at !== null ? 'read' : m.status} />
                        </td>
                        <td role="cell" data-label="Progress">
                          <Progress message={m} />
                        </td>
                        <td role="cell" data-label="Actions">
                          <MessageActions message={m} devicePhone={device.phone ?? ''} onChanged={changed} />
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            )}
            {cursor !== null && (
              <button
                type="button"
                onClick={async () => {
                  try {
                    const answer = await call<Message[]>('GET', query(`&cursor=${encodeURIComponent(cursor)}`));
                    setOlder([...older, ...answer.data]);
                    setCursor(answer.next_cursor ?? null);
                  } catch (failure) {
                    setError(failure);
                  }
                }}
              >
                Load more messages
              </button>
            )}
          </>
        )}
      </section>
    </div>
  );
}

function Progress({ message: m }: { message: Message }) {
  const steps: Array<[string, string | null]> = [
    ['sent', m.sent_at],
    ['delivered', m.delivered_at],
    ['read', m.read_at],
  ];
  return (
    <ul class="progress">
      {m.direction === 'outgoing' &&
        steps
          .filter(([, at]) => at !== null)
          .map(([label, at]) => (
            <li key={label}>
              {label} <Time value={at} />
            </li>
          ))}
      {m.failed_at !== null && (
        <li class="error-text">
          failed <Time value={m.failed_at} />: {m.failed_reason}
        </li>
      )}
    </ul>
  );
}

type Kind = 'chat' | 'image' | 'location' | 'list';

function SendForm({ device, info }: { device: Device; info: GatewayInfo }) {
  const [type, setType] = useState<Kind>('chat');
  const [receiver, setReceiver] = useState('');
  const [text, setText] = useState('');
  const [url, setUrl] = useState('');
  const [lat, setLat] = useState('');
  const [long, setLong] = useState('');
  const [list, setList] = useState(EXAMPLE_LIST);
  const [error, setError] = useState<unknown>(null);
  const [sent, setSent] = useState<Message | null>(null);
  const [busy, setBusy] = useState(false);
  const failure = error instanceof ApiFailure ? error : null;
  const errorsOf = (...paths: string[]) => paths.flatMap((p) => failure?.forField(p) ?? []);

  const body = (): Record<string, unknown> => {
    const base = { device: device.phone ?? '', receiver: normalisePhone(receiver), type };
    if (type === 'chat') return { ...base, params: { text } };
    if (type === 'image') return { ...base, params: { image: { url }, ...(text === '' ? {} : { caption: text }) } };
    if (type === 'location')
      return {
        ...base,
        params: { location: { degreesLatitude: Number(lat), degreesLongitude: Number(long) } },
      };
    let params: unknown;
    try {
      params = JSON.parse(list);
    } catch {
      throw new ApiFailure(400, 'Invalid list parameters', undefined, { params: ['not valid JSON'] });
    }
    return { ...base, params };
  };

  return (
    <form
      class="card"
      aria-label="Send a test message"
      onSubmit={async (e) => {
        e.preventDefault();
        setBusy(true);
        setError(null);
        setSent(null);
        try {
          const answer = await call<Message>('POST', '/messages', body());
          setSent(answer.data);
        } catch (failure) {
          setError(failure);
        } finally {
          setBusy(false);
        }
      }}
    >
      <h2>Send a test message</h2>
      {!device.connected && (
        <p class="hint">
          The device is not connected now: the gateway will answer “Device not connected”.
          {info.network === 'sandbox' ? ' Pair it first.' : ''}
        </p>
      )}
      <Select
        label="Message type"
        value={type}
        onValue={(v) => setType(v as Kind)}
        options={[
          { value: 'chat', label: 'Chat (text)' },
          { value: 'image', label: 'Image by URL' },
          { value: 'location', label: 'Location' },
          { value: 'list', label: 'List (JSON)' },
        ]}
      />
      <Field
        label="Receiver"
        value={receiver}
        onValue={setReceiver}
        onBlur={() => setReceiver(normalisePhone(receiver))}
        hint="A phone number, country code first (e.g. +62 812-3456-7890), or a group’s id ending in @g.us"
        errors={errorsOf('receiver', 'device')}
      />
      {(type === 'chat' || type === 'image') && (
        <div class="field">
          <label for="send-text">{type === 'chat' ? 'Text' : 'Caption'}</label>
          <textarea
            id="send-text"
            rows={3}
            value={text}
            onInput={(e) => setText((e.target as HTMLTextAreaElement).value)}
            aria-invalid={errorsOf('params.text', 'message', 'params.caption').length > 0 || undefined}
          />
          <FieldErrors messages={errorsOf('params.text', 'message', 'params.caption')} />
        </div>
      )}
      {type === 'image' && (
        <Field
          label="Image URL"
          value={url}
          onValue={setUrl}
          type="url"
          errors={errorsOf('params.image', 'file_url')}
        />
      )}
      {type === 'location' && (
        <>
          <Field
            label="Latitude"
            value={lat}
            onValue={setLat}
            inputMode="decimal"
            errors={errorsOf('params.location')}
          />
          <Field label="Longitude" value={long} onValue={setLong} inputMode="decimal" />
        </>
      )}
      {type === 'list' && (
        <div class="field">
          <label for="send-list">List parameters (JSON)</label>
          <textarea
            id="send-list"
            rows={10}
            value={list}
            spellcheck={false}
            onInput={(e) => setList((e.target as HTMLTextAreaElement).value)}
            aria-invalid={
              errorsOf('params', 'title', 'text', 'buttonText', 'sections', 'footer').length > 0 || undefined
            }
          />
          <FieldErrors
            messages={Object.entries(failure?.errors ?? {})
              .filter(([k]) => k !== 'receiver' && k !== 'device')
              .map(([k, v]) => `${k}: ${v.join('; ')}`)}
          />
        </div>
      )}
      <button type="submit" disabled={busy}>
        Send message
      </button>
      {sent !== null && (
        <Notice>
          Accepted as {sent.id} ({sent.status}). It appears below and its status follows.
        </Notice>
      )}
      <ErrorNotice error={error} />
    </form>
  );
}

function FieldErrors({ messages }: { messages: string[] }) {
  if (messages.length === 0) return null;
  return (
    <small class="field-error" role="alert">
      {messages.join('; ')}
    </small>
  );
}

const EXAMPLE_LIST = JSON.stringify(
  {
    title: 'Menu',
    text: 'Pick one',
    buttonText: 'Open',
    sections: [{ title: 'Drinks', rows: [{ title: 'Tea', rowId: 'tea' }] }],
  },
  null,
  2,
);
