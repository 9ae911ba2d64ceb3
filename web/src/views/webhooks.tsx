/**
 * A device's webhook: URL, format, signing secret (hidden until asked, copy,
 * rotate), and the delivery log with every attempt and a retry button.
 */
import { useState } from 'preact/hooks';
import { ApiFailure, call, type Attempt, type Delivery, type Device } from '../api';
import { usePolling } from '../hooks';
import { ConfirmButton, CopyButton, DataTable, ErrorNotice, Field, Notice, Select, StatusBadge, Time } from '../ui';

const FORMATS = [
  { value: 'standard', label: 'Standard Webhooks (standard)' },
  { value: 'whatspie_v1', label: 'Whatspie v1 (whatspie_v1)' },
  { value: 'whatspie_v2', label: 'Whatspie v2 (whatspie_v2)' },
];

export function WebhooksView({ device, onChanged }: { device: Device; onChanged: () => Promise<void> }) {
  const [url, setUrl] = useState(device.webhook_url ?? '');
  const [format, setFormat] = useState(device.webhook_format ?? 'standard');
  const [replyByResponse, setReplyByResponse] = useState(device.webhook_reply ?? false);
  const [showSecret, setShowSecret] = useState(false);
  const [saved, setSaved] = useState('');
  const [error, setError] = useState<unknown>(null);
  const failure = error instanceof ApiFailure ? error : null;

  const save = async (what: string, body: Record<string, unknown>) => {
    setError(null);
    setSaved('');
    try {
      await call('PATCH', `/devices/${device.id}`, body);
      setSaved(what);
      await onChanged();
    } catch (e) {
      setError(e);
    }
  };

  return (
    <div class="grid">
      <form
        class="card"
        aria-label="Webhook settings"
        onSubmit={(e) => {
          e.preventDefault();
          const body: Record<string, unknown> = { webhook_url: url.trim() === '' ? null : url.trim() };
          if (device.webhook_format !== undefined) body.webhook_format = format;
          if (device.webhook_reply !== undefined && format === 'standard') body.webhook_reply = replyByResponse;
          void save('Webhook saved', body);
        }}
      >
        <h2>Webhook</h2>
        <Field
          label="Webhook URL"
          value={url}
          onValue={setUrl}
          type="url"
          hint="Events of this device are POSTed here, signed. Empty to stop deliveries."
          errors={failure?.forField('webhook_url')}
        />
        {device.webhook_format !== undefined && (
          <Select label="Webhook format" value={format} onValue={setFormat} options={FORMATS} />
        )}
        {device.webhook_reply !== undefined && format === 'standard' && (
          <div class="field">
            <label>
              <input
                type="checkbox"
                checked={replyByResponse}
                onChange={(e) => setReplyByResponse((e.target as HTMLInputElement).checked)}
              />{' '}
              Reply by response
            </label>
            <small class="hint">
              A receiver’s answer to an incoming message may carry replies to send (always on for the Whatspie formats).
            </small>
          </div>
        )}
        <button type="submit">Save webhook</button>
        {saved !== '' && <Notice>{saved}.</Notice>}
        <ErrorNotice error={error} />
      </form>
      <div class="card">
        <h2>Signing secret</h2>
        <p class="hint">Receivers verify each delivery’s signature with this secret (Standard Webhooks).</p>
        <p>
          <code class="secret" aria-label="Webhook secret">
            {showSecret ? device.webhook_secret : '••••••••••••••••'}
          </code>
        </p>
        <div class="buttons">
          <button type="button" aria-pressed={showSecret} onClick={() => setShowSecret(!showSecret)}>
            {showSecret ? 'Hide secret' : 'Show secret'}
          </button>
          <CopyButton value={device.webhook_secret} label="Copy secret" />
          <ConfirmButton
            label="Rotate secret"
            question="Rotate the secret? Deliveries from now on are signed with the new one only."
            confirmLabel="Yes, rotate"
            onConfirm={async () => {
              setError(null);
              try {
                await call('POST', `/devices/${device.id}/webhook-secret`);
                setSaved('Secret rotated');
                await onChanged();
              } catch (e) {
                setError(e);
              }
            }}
          />
        </div>
      </div>
      <DeliveryLog
        listPath={`/devices/${device.id}/webhook-deliveries?per_page=20`}
        retryPath={(id) => `/devices/${device.id}/webhook-deliveries/${id}/retry`}
      />
    </div>
  );
}

/** A destination's deliveries, newest first, each with its attempts and a retry (also the account webhooks'). */
export function DeliveryLog({ listPath, retryPath }: { listPath: string; retryPath: (id: string) => string }) {
  const [deliveries, setDeliveries] = useState<Delivery[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [notice, setNotice] = useState('');
  const load = async () => {
    try {
      const answer = await call<Delivery[]>('GET', listPath);
      setDeliveries(answer.data);
      setError(null);
    } catch (failure) {
      setError(failure);
    }
  };
  usePolling(load, 3000, [listPath]);

  return (
    <section class="card wide" aria-labelledby="deliveries-title">
      <h2 id="deliveries-title">Delivery log</h2>
      <ErrorNotice error={error} />
      {notice !== '' && <Notice>{notice}</Notice>}
      {deliveries === null ? (
        <p aria-busy="true">Loading deliveries…</p>
      ) : deliveries.length === 0 ? (
        <p>No deliveries yet. Events (pairing, messages) appear here as they are sent to this destination.</p>
      ) : (
        <DataTable
          label="Deliveries table"
          hiddenCaption="Webhook deliveries, newest first, with their attempts"
          columns={['Event', 'Created', 'Status', 'Attempts (time, HTTP status, latency, error)', 'Actions']}
        >
          {deliveries.map((d) => (
            <tr key={d.id}>
              <th scope="row">
                {d.type}
                <br />
                <small class="muted">{d.id}</small>
              </th>
              <td>
                <Time value={d.created_at} />
              </td>
              <td>
                <StatusBadge value={d.status} />
              </td>
              <td>
                {d.attempts.length === 0 ? (
                  <span class="muted">none yet</span>
                ) : (
                  <ol class="attempts">
                    {d.attempts.map((a, i) => (
                      <li key={i}>
                        <Time value={a.attempted_at} /> · {a.http_status ?? 'no answer'} · {a.latency_ms} ms
                        {a.error !== null && <span class="error-text"> · {a.error}</span>}
                        {a.reply != null && <span> · {describeReply(a.reply)}</span>}
                      </li>
                    ))}
                  </ol>
                )}
              </td>
              <td>
                <button
                  type="button"
                  aria-label={`Retry delivery ${d.id}`}
                  onClick={async () => {
                    setError(null);
                    try {
                      await call('POST', retryPath(d.id));
                      setNotice(`Delivery ${d.id} will be sent again now.`);
                      await load();
                    } catch (failure) {
                      setError(failure);
                    }
                  }}
                >
                  Retry
                </button>
              </td>
            </tr>
          ))}
        </DataTable>
      )}
    </section>
  );
}

/** One line for an attempt's reply note: how many replies were queued or refused, or why the answer was ignored. */
function describeReply(reply: NonNullable<Attempt['reply']>): string {
  if (reply.ignored !== null) return `answer ignored: ${reply.ignored}`;
  return reply.replies
    .map((r) =>
      r.status === 'refused'
        ? `${r.type} refused (${r.error?.message ?? 'error'})`
        : `${r.type} ${r.status.replace('_', ' ')}`,
    )
    .join(', ');
}
