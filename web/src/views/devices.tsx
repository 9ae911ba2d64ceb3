/**
 * The devices list, refreshed every 3 s while visible, and the form that adds one.
 */
import { useEffect, useState } from 'preact/hooks';
import { PACKAGES, call, type Device, type GatewayInfo } from '../api';
import { NetworkMark } from './network-mark';
import { useDisclosure, usePolling } from '../hooks';
import { normalisePhone } from '../../../src/phone-number';
import { DataTable, ErrorNotice, Field, Notice, PhoneField, Select, StatusBadge } from '../ui';
import { FormCard, useSubmission } from '../form-card';

const PER_PAGE = 50;

export function DevicesView({ info }: { info: GatewayInfo }) {
  const [devices, setDevices] = useState<Device[] | null>(null);
  const [total, setTotal] = useState(0);
  const [page, setPage] = useState(1);
  const [error, setError] = useState<unknown>(null);
  const adding = useDisclosure();
  const [created, setCreated] = useState<Device | null>(null);

  useEffect(() => {
    document.title = 'Devices · Messaging Gateway';
  }, []);

  const load = async () => {
    try {
      const answer = await call<Device[]>('GET', `/devices?page=${page}&per_page=${PER_PAGE}`);
      setDevices(answer.data);
      setTotal(answer.meta?.total ?? answer.data.length);
      setError(null);
    } catch (failure) {
      setError(failure);
    }
  };
  usePolling(load, 3000, [page]);

  return (
    <section aria-labelledby="devices-title">
      <div class="title-row">
        <h1 id="devices-title">Devices</h1>
        <button type="button" ref={adding.opener} aria-expanded={adding.open} onClick={adding.toggle}>
          Add device
        </button>
      </div>
      {adding.open && (
        <AddDevice
          onCreated={(device) => {
            setCreated(device);
            adding.close();
            void load();
          }}
          onCancel={adding.close}
        />
      )}
      {created !== null && (
        <Notice>
          Device “{created.name}” created. <a href={`#/devices/${created.id}/pair`}>Pair it now</a>.
        </Notice>
      )}
      <ErrorNotice error={error} />
      {devices === null ? (
        <p aria-busy="true">Loading devices…</p>
      ) : devices.length === 0 ? (
        <p>No devices yet. Add one, then pair it with a phone.</p>
      ) : (
        <DataTable
          label="Devices table"
          hiddenCaption="Devices, refreshed every 3 seconds"
          columns={[
            'Name',
            'Paired',
            'Connected',
            'Phone',
            'Package',
            'Quota used / available',
            'Server',
            'Status',
            'Actions',
          ]}
        >
          {devices.map((d) => (
            <tr key={d.id}>
              <th scope="row">
                <a href={`#/devices/${d.id}`}>{d.name}</a>
              </th>
              <td>
                <StatusBadge value={d.paired_status} /> <NetworkMark device={d} info={info} />
              </td>
              <td>{d.connected ? 'Yes' : 'No'}</td>
              <td>{d.phone ?? <span class="muted">–</span>}</td>
              <td>{d.package.name}</td>
              <td>
                {d.subscription.quote_used} /{' '}
                {d.subscription.quote_available === '-1' ? 'unlimited' : d.subscription.quote_available}
              </td>
              <td>
                {d.server.name} <span class="muted">({d.server.status})</span>
              </td>
              <td>
                <StatusBadge value={d.status} />
              </td>
              <td class="actions">
                {d.paired_status !== 'PAIRED' && d.status === 'ACTIVE' && (
                  <a class="button" href={`#/devices/${d.id}/pair`}>
                    Pair
                  </a>
                )}
                <a class="button" href={`#/devices/${d.id}/messages`}>
                  Messages
                </a>
              </td>
            </tr>
          ))}
        </DataTable>
      )}
      {total > PER_PAGE && (
        <nav aria-label="Pages of devices" class="pager">
          <button type="button" disabled={page === 1} onClick={() => setPage(page - 1)}>
            Previous page
          </button>
          <span>
            Page {page} of {Math.ceil(total / PER_PAGE)}
          </span>
          <button type="button" disabled={page * PER_PAGE >= total} onClick={() => setPage(page + 1)}>
            Next page
          </button>
        </nav>
      )}
    </section>
  );
}

function AddDevice({ onCreated, onCancel }: { onCreated: (d: Device) => void; onCancel: () => void }) {
  const [name, setName] = useState('');
  const [pkg, setPkg] = useState<string>('BETA');
  const [phone, setPhone] = useState('');
  const submission = useSubmission();
  const { failure } = submission;
  return (
    <FormCard
      label="Add device"
      submitLabel="Create"
      submission={submission}
      onCancel={onCancel}
      onSubmit={async () => {
        const body: Record<string, string> = { name, package: pkg };
        if (phone.trim() !== '') body.phone = normalisePhone(phone);
        const answer = await call<Device>('POST', '/devices', body);
        onCreated(answer.data);
      }}
    >
      <Field label="Name" value={name} onValue={setName} required maxLength={100} errors={failure?.forField('name')} />
      <Select
        label="Package"
        value={pkg}
        onValue={setPkg}
        options={PACKAGES.map((p) => ({ value: p.code, label: `${p.name} (${p.code})` }))}
      />
      <PhoneField
        label="Phone (optional)"
        value={phone}
        onValue={setPhone}
        hint="Only this number may pair the device. Country code first, e.g. +62 812-3456-7890."
        errors={failure?.forField('phone')}
      />
    </FormCard>
  );
}
