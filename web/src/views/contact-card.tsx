/**
 * A contact's card as the network shows it to a device (`GET /contacts/{phone}`, docs/contacts.md): name, about,
 * picture, whether the number is on the network, blocked or not, and blocking (asked first) or unblocking it.
 * Reached from a chat, or from a message's sender.
 *
 * Owns: the card. Must never: load a picture from another origin (the dashboard's CSP allows its own images only:
 * another origin's picture is offered as a link).
 */
import { useState } from 'preact/hooks';
import { call, type Contact, type Device } from '../api';
import { usePolling } from '../hooks';
import { ConfirmButton, ErrorNotice, Notice } from '../ui';

export function ContactCard({ device, phone }: { device: Device; phone: string }) {
  const [contact, setContact] = useState<Contact | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [notice, setNotice] = useState('');
  const [busy, setBusy] = useState(false);
  const devicePhone = device.phone ?? String(device.id);
  const path = `/contacts/${encodeURIComponent(phone)}`;
  const load = async () => {
    try {
      const answer = await call<Contact>('GET', `${path}?device=${encodeURIComponent(devicePhone)}`);
      setContact(answer.data);
      setError(null);
    } catch (failure) {
      setError(failure);
    }
  };
  usePolling(load, 10_000, [phone, devicePhone]);

  const block = async (action: 'block' | 'unblock') => {
    setBusy(true);
    setError(null);
    setNotice('');
    try {
      const answer = await call<Contact | null>('POST', `${path}/${action}`, { device: devicePhone });
      setNotice(`${answer.message}.`);
      await load();
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };

  const name = contact?.name ?? null;
  return (
    <section class="card wide" aria-labelledby="contact-title">
      <p class="crumbs">
        <a href={`#/devices/${device.id}/chats/${encodeURIComponent(phone)}`}>Chat with {phone}</a>
      </p>
      <h2 id="contact-title">{name ?? phone}</h2>
      <ErrorNotice error={error} />
      {contact === null ? (
        error === null && <p aria-busy="true">Loading the contact…</p>
      ) : (
        <div class="contact">
          <Picture url={contact.profile_picture_url} name={name ?? phone} />
          <dl class="details">
            <dt>Phone</dt>
            <dd>{contact.phone}</dd>
            <dt>Name</dt>
            <dd>{contact.name ?? <span class="muted">not shared</span>}</dd>
            <dt>About</dt>
            <dd>{contact.about ?? <span class="muted">not shared</span>}</dd>
            <dt>On the network</dt>
            <dd>{contact.registered ? 'Yes' : 'No'}</dd>
            <dt>Blocked</dt>
            <dd>{contact.blocked ? 'Yes: its messages and calls do not reach this device' : 'No'}</dd>
          </dl>
        </div>
      )}
      {contact !== null && (
        <div class="buttons">
          {contact.blocked ? (
            <button type="button" disabled={busy} onClick={() => void block('unblock')}>
              Unblock
            </button>
          ) : (
            <ConfirmButton
              label="Block"
              question={`Block ${name ?? phone}? Its messages and calls stop reaching ${device.name}.`}
              confirmLabel="Yes, block"
              disabled={busy}
              onConfirm={() => block('block')}
            />
          )}
        </div>
      )}
      {notice !== '' && <Notice>{notice}</Notice>}
    </section>
  );
}

function Picture({ url, name }: { url: string | null; name: string }) {
  if (url === null) return <p class="muted">No profile picture</p>;
  let sameOrigin = url.startsWith('data:');
  try {
    sameOrigin ||= new URL(url, location.href).origin === location.origin;
  } catch {
    return <p class="muted">No profile picture</p>;
  }
  if (sameOrigin) return <img class="avatar" src={url} alt={`Profile picture of ${name}`} width={96} height={96} />;
  return (
    <p>
      <a href={url} target="_blank" rel="noopener noreferrer">
        Profile picture of {name}
      </a>{' '}
      <small class="hint">(opens the network’s copy)</small>
    </p>
  );
}
