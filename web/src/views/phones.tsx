/**
 * Sandbox only: virtual phones, so the whole flow works offline. Open a
 * phone's inbox, mark a message read (the sender gets a read receipt), and
 * send a message from the phone to a device (it arrives as incoming).
 * Scanning a pairing QR is on each device's pairing view.
 */
import { useEffect, useState } from 'preact/hooks';
import { ApiFailure, call, type Device, type InboxEntry } from '../api';
import { usePolling } from '../hooks';
import { normalisePhone } from '../../../src/phone-number';
import { DataTable, ErrorNotice, Field, Notice, PhoneField, Select, Time } from '../ui';

interface PhoneView {
  phone: string;
  name: string | null;
  online: boolean;
  inbox: InboxEntry[];
}

export function PhonesView() {
  const [number, setNumber] = useState('');
  const [open, setOpen] = useState<string | null>(null);
  useEffect(() => {
    document.title = 'Virtual phones · Messaging Gateway';
  }, []);
  return (
    <section aria-labelledby="phones-title">
      <h1 id="phones-title">Virtual phones</h1>
      <p>
        The sandbox network simulates phones. Any well-formed number is a phone that receives messages; numbers ending
        in 0000 to 0004 behave specially (not registered, blocking, private, offline, rate-limited).
      </p>
      <form
        class="card"
        aria-label="Open a virtual phone"
        onSubmit={(e) => {
          e.preventDefault();
          setOpen(normalisePhone(number));
        }}
      >
        <PhoneField label="Phone number" value={number} onValue={setNumber} required />
        <button type="submit">Open inbox</button>
      </form>
      {open !== null && open !== '' && <Phone key={open} phone={open} />}
    </section>
  );
}

function Phone({ phone }: { phone: string }) {
  const [view, setView] = useState<PhoneView | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [notice, setNotice] = useState('');
  const load = async () => {
    try {
      const answer = await call<PhoneView>('GET', `/sandbox/phones/${encodeURIComponent(phone)}`);
      setView(answer.data);
      setError(null);
    } catch (failure) {
      setError(failure);
    }
  };
  usePolling(load, 3000, [phone]);
  const missing = error instanceof ApiFailure && error.status === 404 && view === null;

  return (
    <div class="grid">
      <section class="card wide" aria-labelledby="inbox-title">
        <h2 id="inbox-title">Inbox of {phone}</h2>
        {missing ? (
          <>
            <p>The sandbox has no phone with this number yet.</p>
            <button
              type="button"
              onClick={async () => {
                try {
                  await call('POST', '/sandbox/phones', { phone });
                  await load();
                } catch (failure) {
                  setError(failure);
                }
              }}
            >
              Create this virtual phone
            </button>
          </>
        ) : (
          <ErrorNotice error={error} />
        )}
        {notice !== '' && <Notice>{notice}</Notice>}
        {view !== null &&
          (view.inbox.length === 0 ? (
            <p>No messages received yet.</p>
          ) : (
            <DataTable
              label="Inbox table"
              hiddenCaption="Messages this phone received, oldest first"
              columns={['From', 'Type', 'Content', 'Received', 'Read']}
            >
              {view.inbox.map((m) => (
                <tr key={m.message_id}>
                  <th scope="row">{m.from}</th>
                  <td>{m.type}</td>
                  <td class="text">{summary(m)}</td>
                  <td>
                    <Time value={m.received_at} />
                  </td>
                  <td>
                    {m.read_at !== null ? (
                      <Time value={m.read_at} />
                    ) : (
                      <button
                        type="button"
                        aria-label={`Mark read: ${summary(m).slice(0, 40)}`}
                        onClick={async () => {
                          try {
                            await call('POST', `/sandbox/phones/${encodeURIComponent(phone)}/read`, {
                              message_id: m.message_id,
                            });
                            setNotice('Marked read: the sender gets a read receipt.');
                            await load();
                          } catch (failure) {
                            setError(failure);
                          }
                        }}
                      >
                        Mark read
                      </button>
                    )}
                  </td>
                </tr>
              ))}
            </DataTable>
          ))}
      </section>
      <SendFromPhone phone={phone} />
    </div>
  );
}

function summary(m: InboxEntry): string {
  const c = m.content;
  for (const key of ['text', 'caption', 'title', 'name']) {
    if (typeof c[key] === 'string') return c[key] as string;
  }
  return JSON.stringify(c).slice(0, 200);
}

function SendFromPhone({ phone }: { phone: string }) {
  const [devices, setDevices] = useState<Device[]>([]);
  const [to, setTo] = useState('');
  const [text, setText] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [sent, setSent] = useState('');
  useEffect(() => {
    call<Device[]>('GET', '/devices?per_page=100').then(
      (answer) => {
        const paired = answer.data.filter((d) => d.phone !== null && d.paired_status === 'PAIRED');
        setDevices(paired);
        if (paired[0]?.phone) setTo(paired[0].phone);
      },
      (failure) => setError(failure),
    );
  }, []);
  return (
    <form
      class="card"
      aria-label="Send from this phone"
      onSubmit={async (e) => {
        e.preventDefault();
        setError(null);
        setSent('');
        try {
          await call('POST', `/sandbox/phones/${encodeURIComponent(phone)}/messages`, { to, text });
          setSent('Sent: it arrives at the device as an incoming message.');
          setText('');
        } catch (failure) {
          setError(failure);
        }
      }}
    >
      <h2>Send to a device</h2>
      {devices.length === 0 ? (
        <p>No paired device to send to.</p>
      ) : (
        <>
          <Select
            label="To device"
            value={to}
            onValue={setTo}
            options={devices.map((d) => ({ value: d.phone ?? '', label: `${d.name} (${d.phone})` }))}
          />
          <Field label="Message text" value={text} onValue={setText} required />
          <button type="submit">Send to device</button>
        </>
      )}
      {sent !== '' && <Notice>{sent}</Notice>}
      <ErrorNotice error={error} />
    </form>
  );
}
