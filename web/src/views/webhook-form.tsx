/**
 * The form that creates one of the account's webhooks (`POST /webhooks`): its URL, every device or some, every
 * event type or some, its format, custom headers (name and value rows) and whether it starts enabled. The API's
 * messages show next to the fields they name.
 *
 * Owns: turning the form into the request body. Must never: check what the API checks (headers, URL, limits): the
 * API's answer is shown as it is.
 */
import { useState } from 'preact/hooks';
import { call, type AccountWebhook, type Device } from '../api';
import { Field, Select } from '../ui';
import { FormCard, useSubmission } from '../form-card';
import { fieldErrors } from './webhook-parts';

const FORMATS = [
  { value: 'standard', label: 'Standard Webhooks (standard)' },
  { value: 'whatspie_v1', label: 'Whatspie v1 (whatspie_v1)' },
  { value: 'whatspie_v2', label: 'Whatspie v2 (whatspie_v2)' },
];

/** The most custom headers a webhook takes (DECISIONS 17): the form offers no more rows. */
const MAX_HEADERS = 10;

export function WebhookForm({
  devices,
  onCreated,
  onCancel,
}: {
  devices: Device[];
  onCreated: (hook: AccountWebhook) => void;
  onCancel: () => void;
}) {
  const [url, setUrl] = useState('');
  const [allDevices, setAllDevices] = useState(true);
  const [chosen, setChosen] = useState<number[]>([]);
  const [events, setEvents] = useState('');
  const [format, setFormat] = useState('standard');
  const [headers, setHeaders] = useState<Array<{ name: string; value: string }>>([]);
  const [enabled, setEnabled] = useState(true);
  const submission = useSubmission();
  const types = events
    .split(/[\s,]+/)
    .map((t) => t.trim())
    .filter(Boolean);
  const headerErrors = fieldErrors(submission.error, 'headers');

  return (
    <FormCard
      label="New webhook"
      submitLabel="Create webhook"
      submission={submission}
      onCancel={onCancel}
      onSubmit={async () => {
        const body: Record<string, unknown> = { url: url.trim(), format, enabled };
        if (!allDevices) body.devices = chosen;
        if (types.length > 0) body.events = types;
        if (headers.length > 0) body.headers = Object.fromEntries(headers.map((h) => [h.name.trim(), h.value]));
        onCreated((await call<AccountWebhook>('POST', '/webhooks', body)).data);
      }}
    >
      <Field
        label="Webhook URL"
        type="url"
        value={url}
        onValue={setUrl}
        required
        hint="Events are POSTed here, signed with this webhook's own secret."
        errors={fieldErrors(submission.error, 'url')}
      />
      <fieldset>
        <legend>Devices</legend>
        <label>
          <input type="radio" name="hook-devices" checked={allDevices} onChange={() => setAllDevices(true)} /> Every
          device, also ones added later
        </label>
        <label>
          <input type="radio" name="hook-devices" checked={!allDevices} onChange={() => setAllDevices(false)} /> Only
          these:
        </label>
        {!allDevices && (
          <ul class="choices">
            {devices.map((d) => (
              <li key={d.id}>
                <label>
                  <input
                    type="checkbox"
                    checked={chosen.includes(d.id)}
                    onChange={(e) => {
                      const on = (e.target as HTMLInputElement).checked;
                      setChosen((c) => (on ? [...c, d.id] : c.filter((x) => x !== d.id)));
                    }}
                  />{' '}
                  {d.name} {d.phone !== null && <span class="muted">({d.phone})</span>}
                </label>
              </li>
            ))}
          </ul>
        )}
        {fieldErrors(submission.error, 'devices').length > 0 && (
          <small class="field-error" role="alert">
            {fieldErrors(submission.error, 'devices').join('; ')}
          </small>
        )}
      </fieldset>
      <Field
        label="Event types"
        value={events}
        onValue={setEvents}
        hint="Empty for every event; else the types, separated by commas (e.g. message.incoming, message.delivered)."
        errors={fieldErrors(submission.error, 'events')}
      />
      <Select label="Format" value={format} onValue={setFormat} options={FORMATS} />
      <fieldset>
        <legend>Custom headers</legend>
        {headers.map((h, i) => (
          <div class="header-row" key={i}>
            <Field
              label={`Header ${i + 1} name`}
              value={h.name}
              onValue={(name) => setHeaders(headers.map((x, j) => (j === i ? { ...x, name } : x)))}
            />
            <Field
              label={`Header ${i + 1} value`}
              value={h.value}
              onValue={(value) => setHeaders(headers.map((x, j) => (j === i ? { ...x, value } : x)))}
            />
            <button
              type="button"
              aria-label={`Remove header ${i + 1}`}
              onClick={() => setHeaders(headers.filter((_, j) => j !== i))}
            >
              Remove
            </button>
          </div>
        ))}
        {headers.length < MAX_HEADERS && (
          <button type="button" onClick={() => setHeaders([...headers, { name: '', value: '' }])}>
            Add header
          </button>
        )}
        <small class="hint">
          Sent with every delivery, up to {MAX_HEADERS}; not Host, Content-Length, Transfer-Encoding, Connection or
          webhook-*.
        </small>
        {headerErrors.length > 0 && (
          <small class="field-error" role="alert">
            {headerErrors.join('; ')}
          </small>
        )}
      </fieldset>
      <label>
        <input type="checkbox" checked={enabled} onChange={(e) => setEnabled((e.target as HTMLInputElement).checked)} />{' '}
        Enabled: deliver events from now on
      </label>
    </FormCard>
  );
}
