/**
 * The account's webhooks (`/webhooks`, docs/webhooks.md, Several webhooks): the list with each one's device and
 * event filters, enabling or disabling one from the list, and the form that creates one (URL, devices, event types,
 * format, custom headers) and shows its signing secret once. One webhook's page is account-webhook.tsx.
 *
 * Owns: the list and the creation form. Must never: keep a secret beyond the notice that shows it once.
 */
import { useEffect, useState } from 'preact/hooks';
import { call, type AccountWebhook, type Device } from '../api';
import { useDisclosure, usePolling } from '../hooks';
import { DataTable, ErrorNotice, Notice, StatusBadge } from '../ui';
import { AccountWebhookView } from './account-webhook';
import { WebhookForm } from './webhook-form';
import { OnceSecret } from './webhook-secret';
import { describeDevices, describeEvents, takeDeletedNotice } from './webhook-parts';

export function AccountWebhooksView({ id }: { id: string | undefined }) {
  useEffect(() => {
    document.title = 'Webhooks · Messaging Gateway';
  }, []);
  const [devices, setDevices] = useState<Device[]>([]);
  usePolling(async () => {
    setDevices((await call<Device[]>('GET', '/devices?per_page=100')).data);
  }, 10_000);
  if (id !== undefined) return <AccountWebhookView id={id} devices={devices} />;
  return <WebhookList devices={devices} />;
}

function WebhookList({ devices }: { devices: Device[] }) {
  const [hooks, setHooks] = useState<AccountWebhook[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [notice, setNotice] = useState<string | null>(takeDeletedNotice);
  const [created, setCreated] = useState<AccountWebhook | null>(null);
  const creating = useDisclosure();
  const load = async () => {
    try {
      setHooks((await call<AccountWebhook[]>('GET', '/webhooks')).data);
      setError(null);
    } catch (failure) {
      setError(failure);
    }
  };
  usePolling(load, 3000);

  const toggle = async (hook: AccountWebhook) => {
    setError(null);
    setNotice(null);
    try {
      const answer = await call<AccountWebhook>('PATCH', `/webhooks/${encodeURIComponent(hook.id)}`, {
        enabled: !hook.enabled,
      });
      setNotice(`${answer.message}: ${hook.url} ${answer.data.enabled ? 'enabled' : 'disabled'}.`);
      await load();
    } catch (failure) {
      setError(failure);
    }
  };

  return (
    <section aria-labelledby="webhooks-title">
      <div class="title-row">
        <h1 id="webhooks-title">Webhooks</h1>
        <button
          type="button"
          ref={creating.opener}
          aria-expanded={creating.open}
          onClick={() => {
            setCreated(null);
            setNotice(null);
            creating.toggle();
          }}
        >
          New webhook
        </button>
      </div>
      <p class="hint">
        Each webhook gets the events of the devices and types it names, signed with its own secret, with its own
        retries. A device’s own webhook URL (its Webhooks tab) keeps working beside these.
      </p>
      {creating.open && (
        <WebhookForm
          devices={devices}
          onCreated={(hook) => {
            setCreated(hook);
            creating.close();
            void load();
          }}
          onCancel={creating.close}
        />
      )}
      {created !== null && (
        <OnceSecret secret={created.secret ?? ''} what="Webhook created">
          <a href={`#/webhooks/${encodeURIComponent(created.id)}`}>{created.url}</a>
        </OnceSecret>
      )}
      {notice !== null && <Notice>{notice}</Notice>}
      <ErrorNotice error={error} />
      {hooks === null ? (
        <p aria-busy="true">Loading webhooks…</p>
      ) : hooks.length === 0 ? (
        <p>No webhook yet: create one to receive events at a URL of yours.</p>
      ) : (
        <DataTable label="Webhooks table" columns={['URL', 'Devices', 'Events', 'Format', 'State', 'Actions']}>
          {hooks.map((h) => (
            <tr key={h.id}>
              <th scope="row">
                <a href={`#/webhooks/${encodeURIComponent(h.id)}`}>{h.url}</a>
              </th>
              <td>{describeDevices(h.devices, devices)}</td>
              <td>{describeEvents(h.events)}</td>
              <td>{h.format}</td>
              <td>
                <StatusBadge value={h.enabled ? 'enabled' : 'disabled'} />
              </td>
              <td>
                <button
                  type="button"
                  aria-label={`${h.enabled ? 'Disable' : 'Enable'} ${h.url}`}
                  onClick={() => void toggle(h)}
                >
                  {h.enabled ? 'Disable' : 'Enable'}
                </button>
              </td>
            </tr>
          ))}
        </DataTable>
      )}
    </section>
  );
}
