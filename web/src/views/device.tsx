/**
 * One device: its details and actions (rename, restart, log out, delete) with
 * its live events, and the tabs for pairing, messages, chats (with contact
 * cards), webhooks and groups. Chats and the live events are offered when the
 * gateway has their routes.
 */
import { useEffect, useState } from 'preact/hooks';
import { ApiFailure, call, type Device, type GatewayInfo } from '../api';
import { NetworkMark } from './network-mark';
import { navigate, useHasRoute, usePolling } from '../hooks';
import { ConfirmButton, ErrorNotice, Field, Notice, StatusBadge, Time } from '../ui';
import { PairingView } from './pairing';
import { MessagesView } from './messages';
import { WebhooksView } from './webhooks';
import { GroupsView } from './groups';
import { ChatsView } from './chats';
import { ContactCard } from './contact-card';
import { EventTail } from './event-tail';

const TABS = [
  { key: 'overview', label: 'Overview' },
  { key: 'pair', label: 'Pairing' },
  { key: 'messages', label: 'Messages' },
  { key: 'chats', label: 'Chats' },
  { key: 'webhooks', label: 'Webhooks' },
  { key: 'groups', label: 'Groups' },
] as const;

export function DeviceView({ id, tab, rest, info }: { id: number; tab: string; rest: string[]; info: GatewayInfo }) {
  const [device, setDevice] = useState<Device | null>(null);
  const [error, setError] = useState<unknown>(null);
  const chats = useHasRoute('/chats') === true;

  const load = async () => {
    try {
      const answer = await call<Device>('GET', `/devices/${id}`);
      setDevice(answer.data);
      setError(null);
    } catch (failure) {
      setError(failure);
    }
  };
  usePolling(load, 3000, [id]);
  useEffect(() => {
    if (device !== null) document.title = `${device.name} · ${tabLabel(tab)} · Messaging Gateway`;
  }, [device?.name, tab]);

  // Until the device of this address has loaded (never the previous one's data under its address).
  if (device === null || device.id !== id) {
    return (
      <section>
        <h1>Device {id}</h1>
        {error === null ? <p aria-busy="true">Loading…</p> : <ErrorNotice error={error} />}
        <p>
          <a href="#/devices">Back to devices</a>
        </p>
      </section>
    );
  }
  // Keyed by device: a form's state (a name being edited, a URL) never carries over to another device.
  const key = device.id;
  let body;
  if (tab === 'pair') body = <PairingView key={key} device={device} info={info} onChanged={load} />;
  else if (tab === 'messages') body = <MessagesView key={key} device={device} info={info} />;
  else if (tab === 'webhooks') body = <WebhooksView key={key} device={device} onChanged={load} />;
  else if (tab === 'groups') body = <GroupsView key={key} device={device} groupId={rest[0]} />;
  else if (tab === 'chats') body = <ChatsView key={key} device={device} chat={decoded(rest[0])} />;
  else if (tab === 'contacts' && rest[0] !== undefined)
    body = <ContactCard key={key} device={device} phone={decoded(rest[0]) ?? ''} />;
  else body = <Overview key={key} device={device} onChanged={load} onDeleted={() => navigate('/devices')} />;

  return (
    <section aria-labelledby="device-title">
      <p class="crumbs">
        <a href="#/devices">Devices</a> ›
      </p>
      <div class="title-row">
        <h1 id="device-title">{device.name}</h1>
        <StatusBadge value={device.paired_status} />
        <NetworkMark device={device} info={info} />
        <span class="muted">{device.connected ? 'online' : 'offline'}</span>
      </div>
      <ErrorNotice error={error} />
      <nav aria-label="Device sections" class="tabs">
        {TABS.filter((t) => t.key !== 'chats' || chats).map((t) => (
          <a
            key={t.key}
            href={`#/devices/${id}${t.key === 'overview' ? '' : `/${t.key}`}`}
            aria-current={tab === t.key || (tab === 'contacts' && t.key === 'chats') ? 'page' : undefined}
          >
            {t.label}
          </a>
        ))}
      </nav>
      {body}
    </section>
  );
}

/** A path segment as the app wrote it (encodeURIComponent): a chat's JID has an `@`. */
function decoded(part: string | undefined): string | undefined {
  if (part === undefined) return undefined;
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
}

function tabLabel(tab: string): string {
  if (tab === 'contacts') return 'Contact';
  return TABS.find((t) => t.key === tab)?.label ?? 'Overview';
}

function Overview({
  device,
  onChanged,
  onDeleted,
}: {
  device: Device;
  onChanged: () => Promise<void>;
  onDeleted: () => void;
}) {
  const [name, setName] = useState(device.name);
  const [saved, setSaved] = useState('');
  const [error, setError] = useState<unknown>(null);
  const failure = error instanceof ApiFailure ? error : null;
  const tail = useHasRoute('/events/stream') === true;

  const act = async (what: string, work: () => Promise<unknown>) => {
    setError(null);
    setSaved('');
    try {
      await work();
      setSaved(what);
      await onChanged();
    } catch (e) {
      setError(e);
    }
  };

  return (
    <div class="grid">
      <div class="card">
        <h2>Details</h2>
        <dl class="details">
          <dt>Phone</dt>
          <dd>{device.phone ?? 'not paired yet'}</dd>
          <dt>Paired</dt>
          <dd>{device.paired_status}</dd>
          <dt>Connected</dt>
          <dd>{device.connected ? 'Yes' : 'No'}</dd>
          <dt>Status</dt>
          <dd>
            {device.status}{' '}
            <small class="hint">(suspending and resuming a device is done with the CLI: gateway devices)</small>
          </dd>
          <dt>Package</dt>
          <dd>
            {device.package.name} ({device.package.code})
          </dd>
          <dt>Quota used</dt>
          <dd>{device.subscription.quote_used}</dd>
          <dt>Quota available</dt>
          <dd>{device.subscription.quote_available === '-1' ? 'unlimited' : device.subscription.quote_available}</dd>
          <dt>Server</dt>
          <dd>
            {device.server.name} ({device.server.status})
          </dd>
          <dt>Created</dt>
          <dd>
            <Time value={device.created_at} />
          </dd>
        </dl>
      </div>
      <form
        class="card"
        aria-label="Rename device"
        onSubmit={(e) => {
          e.preventDefault();
          void act('Name saved', () => call('PATCH', `/devices/${device.id}`, { name }));
        }}
      >
        <h2>Name</h2>
        <Field label="Device name" value={name} onValue={setName} required errors={failure?.forField('name')} />
        <button type="submit">Save name</button>
      </form>
      <div class="card">
        <h2>Connection</h2>
        <div class="buttons">
          <button
            type="button"
            disabled={device.status !== 'ACTIVE'}
            onClick={() => void act('Restarting the connection', () => call('POST', `/devices/${device.id}/restart`))}
          >
            Restart connection
          </button>
          <ConfirmButton
            label="Log out"
            question="Log this device out of the network? It must be paired again."
            confirmLabel="Yes, log out"
            disabled={device.paired_status !== 'PAIRED'}
            onConfirm={() => act('Logged out', () => call('POST', `/devices/${device.id}/logout`))}
          />
          <ConfirmButton
            label="Delete device"
            question={`Delete “${device.name}”? Its messages stay queryable by id.`}
            confirmLabel="Yes, delete"
            onConfirm={async () => {
              setError(null);
              try {
                await call('DELETE', `/devices/${device.id}`);
                onDeleted();
              } catch (e) {
                setError(e);
              }
            }}
          />
        </div>
      </div>
      {saved !== '' && <Notice>{saved}.</Notice>}
      <ErrorNotice error={error} />
      {tail && <EventTail deviceId={device.id} />}
    </div>
  );
}
