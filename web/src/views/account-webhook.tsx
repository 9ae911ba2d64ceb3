/**
 * One of the account's webhooks: its URL, filters, format and custom headers; enabling or disabling it, rotating
 * its secret (the new one shown once), deleting it (asked first), and its deliveries with their attempts and a
 * retry.
 *
 * Owns: the webhook's page. Must never: show a secret the API did not answer (it is never read back).
 */
import { useEffect, useState } from 'preact/hooks';
import { call, type AccountWebhook, type Device } from '../api';
import { navigate, usePolling } from '../hooks';
import { ConfirmButton, ErrorNotice, Notice, StatusBadge, Time } from '../ui';
import { describeDevices, describeEvents, leaveDeletedNotice } from './webhook-parts';
import { DeliveryLog } from './webhooks';
import { OnceSecret } from './webhook-secret';

export function AccountWebhookView({ id, devices }: { id: string; devices: Device[] }) {
  const [hook, setHook] = useState<AccountWebhook | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [notice, setNotice] = useState('');
  const [secret, setSecret] = useState<string | null>(null);
  const path = `/webhooks/${encodeURIComponent(id)}`;
  const load = async () => {
    try {
      setHook((await call<AccountWebhook>('GET', path)).data);
      setError(null);
    } catch (failure) {
      setError(failure);
    }
  };
  usePolling(load, 5000, [id]);
  useEffect(() => {
    if (hook !== null) document.title = `${hook.url} · Webhooks · Messaging Gateway`;
  }, [hook?.url]);

  const act = async (work: () => Promise<void>) => {
    setError(null);
    setNotice('');
    setSecret(null);
    try {
      await work();
    } catch (failure) {
      setError(failure);
    }
  };

  return (
    <section aria-labelledby="webhook-title">
      <p class="crumbs">
        <a href="#/webhooks">Webhooks</a> ›
      </p>
      <div class="title-row">
        <h1 id="webhook-title">{hook?.url ?? `Webhook ${id}`}</h1>
        {hook !== null && <StatusBadge value={hook.enabled ? 'enabled' : 'disabled'} />}
      </div>
      <ErrorNotice error={error} />
      {notice !== '' && <Notice>{notice}</Notice>}
      {secret !== null && <OnceSecret secret={secret} what="Secret rotated" />}
      {hook !== null && (
        <div class="grid">
          <div class="card">
            <h2>Settings</h2>
            <dl class="details">
              <dt>URL</dt>
              <dd>
                <code>{hook.url}</code>
              </dd>
              <dt>Devices</dt>
              <dd>{describeDevices(hook.devices, devices)}</dd>
              <dt>Events</dt>
              <dd>{describeEvents(hook.events)}</dd>
              <dt>Format</dt>
              <dd>{hook.format}</dd>
              <dt>Custom headers</dt>
              <dd>
                {Object.keys(hook.headers).length === 0 ? (
                  <span class="muted">none</span>
                ) : (
                  <ul aria-label="Custom headers">
                    {Object.entries(hook.headers).map(([name, value]) => (
                      <li key={name}>
                        <code>
                          {name}: {value}
                        </code>
                      </li>
                    ))}
                  </ul>
                )}
              </dd>
              <dt>Created</dt>
              <dd>
                <Time value={hook.created_at} />
              </dd>
            </dl>
          </div>
          <div class="card">
            <h2>Actions</h2>
            <div class="buttons">
              <button
                type="button"
                onClick={() =>
                  void act(async () => {
                    const answer = await call<AccountWebhook>('PATCH', path, { enabled: !hook.enabled });
                    setHook(answer.data);
                    setNotice(`${answer.message}: ${answer.data.enabled ? 'enabled' : 'disabled'}.`);
                  })
                }
              >
                {hook.enabled ? 'Disable' : 'Enable'}
              </button>
              <ConfirmButton
                label="Rotate secret"
                question="Rotate the secret? The receiver needs the new one to verify deliveries."
                confirmLabel="Yes, rotate"
                onConfirm={() =>
                  act(async () => {
                    const answer = await call<{ secret: string }>('POST', `${path}/secret`);
                    setSecret(answer.data.secret);
                  })
                }
              />
              <ConfirmButton
                label="Delete webhook"
                question={`Delete the webhook to ${hook.url}? Its deliveries stop.`}
                confirmLabel="Yes, delete"
                onConfirm={() =>
                  act(async () => {
                    const answer = await call<null>('DELETE', path);
                    leaveDeletedNotice(`${answer.message}: ${hook.url}.`);
                    navigate('/webhooks');
                  })
                }
              />
            </div>
          </div>
          <DeliveryLog
            listPath={`${path}/deliveries?per_page=20`}
            retryPath={(delivery) => `${path}/deliveries/${encodeURIComponent(delivery)}/retry`}
          />
        </div>
      )}
    </section>
  );
}
