/**
 * The pairing view: the current QR (replaced as the network rotates it), the
 * time left in the pairing window, a new attempt once it has expired, pairing
 * by code where the gateway offers it, and "Connected" with the number as
 * soon as the device pairs, without a reload.
 *
 * The window is the gateway's: its end is read on the gateway's clock (the
 * browser's may be off by minutes). Once it has ended the page shows no QR and
 * asks the gateway for none (a QR request then would start a new attempt
 * unasked) until the person starts a new attempt.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiFailure, call, gatewayClockOffset, type Device, type GatewayInfo } from '../api';
import { apiPaths } from '../features';
import { usePolling } from '../hooks';
import { decodeQrImage, loaded } from '../qr';
import { normalisePhone } from '../../../src/phone-number';
import { ErrorNotice, Notice, PhoneField } from '../ui';

/**
 * The window's end on this browser's clock is at most 1 s early (see gatewayClockOffset). The QR is no
 * longer asked for this close to it, so that no request reaches the gateway after the real end; the end is
 * shown this long after it, so never before the real one.
 */
const STOP_ASKING_MS = 1500;
const END_SHOWN_AFTER_MS = 1000;

interface QrData {
  qr?: string;
  expires_at?: string | null;
}

export function PairingView({
  device,
  info,
  onChanged,
}: {
  device: Device;
  info: GatewayInfo;
  onChanged: () => Promise<void>;
}) {
  if (device.paired_status === 'PAIRED') {
    return (
      <div class="card pairing">
        <h2>Pairing</h2>
        <p role="status" class="connected">
          <strong>Connected</strong> as <span class="phone">{device.phone}</span>
          {device.connected ? '' : ' (offline now; it reconnects by itself)'}
        </p>
        <p>
          <a href={`#/devices/${device.id}/messages`}>Send a test message</a>
        </p>
      </div>
    );
  }
  if (device.status !== 'ACTIVE') {
    return (
      <div class="card pairing">
        <h2>Pairing</h2>
        <p role="alert" class="error">
          This device is suspended: it cannot pair until an operator resumes it.
        </p>
      </div>
    );
  }
  return <QrPairing device={device} info={info} onChanged={onChanged} />;
}

function QrPairing({ device, info, onChanged }: { device: Device; info: GatewayInfo; onChanged: () => Promise<void> }) {
  const [qr, setQr] = useState<string | null>(null);
  const [expiresAt, setExpiresAt] = useState<number | null>(null);
  const [now, setNow] = useState(Date.now());
  // A fresh attempt starts only when asked: an expired one is shown as such, not silently renewed.
  const [attempt, setAttempt] = useState(device.paired_status === 'EXPIRED' ? 0 : 1);
  const [error, setError] = useState<unknown>(null);
  const image = useRef<HTMLImageElement>(null);
  // Where focus goes when the button that started a new attempt goes away: the top of the card.
  const heading = useRef<HTMLHeadingElement>(null);

  const expired = attempt === 0 || (expiresAt !== null && now >= expiresAt + END_SHOWN_AFTER_MS);

  const fetchQr = async () => {
    const answer = await call<QrData>('GET', `/devices/${device.id}/qr?response_type=url`);
    if (answer.data?.qr === undefined) {
      // "Device connected": it paired between two polls.
      await onChanged();
      return;
    }
    setQr(answer.data.qr);
    setNow(Date.now());
    // On this browser's clock: the gateway's end, less how far the gateway's clock is ahead.
    setExpiresAt(answer.data.expires_at ? Date.parse(answer.data.expires_at) - gatewayClockOffset() : null);
    setError(null);
  };

  usePolling(
    async () => {
      if (expired || (expiresAt !== null && Date.now() >= expiresAt - STOP_ASKING_MS)) return;
      try {
        await fetchQr();
      } catch (failure) {
        setError(failure);
      }
    },
    2500,
    [attempt, expired],
  );
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, []);
  useEffect(() => {
    if (expired) setQr(null);
  }, [expired]);
  // The window can also end where this page cannot see its end time: the device says so.
  useEffect(() => {
    if (device.paired_status === 'EXPIRED') setAttempt(0);
  }, [device.paired_status]);

  const secondsLeft = expiresAt === null ? null : Math.max(0, Math.ceil((expiresAt - now) / 1000));

  return (
    <div class="grid">
      <div class="card pairing">
        <h2 ref={heading} tabIndex={-1}>
          Scan the QR code
        </h2>
        <p>
          On the phone, open the messaging app, then <em>Linked devices → Link a device</em>, and point the camera at
          this code. It changes every few seconds; this page follows it.
        </p>
        {expired ? (
          <div>
            <p role="alert" class="error">
              {device.paired_status === 'EXPIRED' || attempt === 0
                ? 'The pairing window ended before a phone scanned the code.'
                : 'The pairing window has ended.'}
            </p>
            <button
              type="button"
              onClick={() => {
                setExpiresAt(null);
                setQr(null);
                setAttempt((n) => n + 1);
                setNow(Date.now());
                heading.current?.focus();
              }}
            >
              Start a new pairing attempt
            </button>
          </div>
        ) : qr === null ? (
          <p aria-busy="true">Waiting for the network’s QR code…</p>
        ) : (
          <>
            <img ref={image} class="qr" src={qr} alt={`QR code to pair ${device.name}`} width={246} height={246} />
            {secondsLeft !== null && (
              <p class="countdown">
                Time left in this pairing window: <strong>{formatSeconds(secondsLeft)}</strong>
              </p>
            )}
          </>
        )}
        <p class="hint" role="status">
          Waiting for the phone… this page switches to “Connected” by itself.
        </p>
        <ErrorNotice error={error} />
      </div>
      {info.sandbox_control && !expired && qr !== null && (
        <VirtualScan device={device} image={image} refresh={fetchQr} onChanged={onChanged} />
      )}
      <PairingCode device={device} sandbox={info.sandbox_control} onChanged={onChanged} />
    </div>
  );
}

function formatSeconds(total: number): string {
  const m = Math.floor(total / 60);
  const s = total % 60;
  return `${m}:${String(s).padStart(2, '0')}`;
}

function VirtualScan({
  device,
  image,
  refresh,
  onChanged,
}: {
  device: Device;
  image: { current: HTMLImageElement | null };
  refresh: () => Promise<void>;
  onChanged: () => Promise<void>;
}) {
  const [phone, setPhone] = useState(suggestedPhone(device));
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const [done, setDone] = useState(false);
  const failure = error instanceof ApiFailure ? error : null;
  return (
    <form
      class="card sandbox"
      aria-label="Virtual phone"
      onSubmit={async (e) => {
        e.preventDefault();
        setBusy(true);
        setError(null);
        try {
          // The code rotates; look at the current one, as a camera would.
          await refresh();
          const img = image.current;
          if (img === null) throw new Error('No QR code is shown');
          await loaded(img);
          const text = await decodeQrImage(img);
          await call('POST', '/sandbox/scan', { qr: text, phone: normalisePhone(phone) });
          setDone(true);
          await onChanged();
        } catch (failure) {
          setError(failure);
        } finally {
          setBusy(false);
        }
      }}
    >
      <h2>Sandbox: virtual phone</h2>
      <p>The sandbox has no real phones. A virtual phone reads the QR image shown on this page and scans it.</p>
      <PhoneField label="Virtual phone number" value={phone} onValue={setPhone} errors={failure?.forField('phone')} />
      <button type="submit" disabled={busy}>
        Scan with virtual phone
      </button>
      {done && <Notice>Scanned. Waiting for the device to connect…</Notice>}
      <ErrorNotice error={error} />
    </form>
  );
}

function suggestedPhone(device: Device): string {
  // A fresh, well-formed number per device (the sandbox treats any such number as a registered phone).
  return device.phone ?? `6281${String(100000 + ((device.id * 7919) % 900000)).padStart(6, '0')}${device.id % 10}`;
}

function PairingCode({
  device,
  sandbox,
  onChanged,
}: {
  device: Device;
  sandbox: boolean;
  onChanged: () => Promise<void>;
}) {
  const [offered, setOffered] = useState<boolean | null>(null);
  const [phone, setPhone] = useState(device.phone ?? '');
  const [code, setCode] = useState<{ pairing_code: string; phone: string } | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [entered, setEntered] = useState(false);
  const failure = error instanceof ApiFailure ? error : null;

  useEffect(() => {
    void apiPaths().then((paths) => setOffered(paths.has('/devices/{id}/pairing-code')));
  }, []);
  if (offered !== true) return null;

  return (
    <form
      class="card"
      aria-label="Pair with a code"
      onSubmit={async (e) => {
        e.preventDefault();
        setError(null);
        try {
          const answer = await call<{ pairing_code: string; phone: string } | undefined>(
            'POST',
            `/devices/${device.id}/pairing-code`,
            { phone: normalisePhone(phone) },
          );
          // "Device connected" carries no code: it paired meanwhile, and the view switches by itself.
          if (answer.data === undefined) await onChanged();
          else setCode(answer.data);
        } catch (failure) {
          if (failure instanceof ApiFailure && (failure.status === 405 || failure.message === 'Not found')) {
            setOffered(false);
            return;
          }
          setError(failure);
        }
      }}
    >
      <h2>Pair with a code instead</h2>
      <p>For a phone that cannot scan: get a code and type it in the phone’s linked-devices screen.</p>
      <PhoneField
        label="Phone number for the code"
        value={phone}
        onValue={setPhone}
        errors={failure?.forField('phone')}
      />
      <button type="submit">Get pairing code</button>
      {code !== null && (
        <p role="status">
          Pairing code for {code.phone}: <strong class="pairing-code">{code.pairing_code}</strong>
        </p>
      )}
      {code !== null && sandbox && (
        <button
          type="button"
          onClick={async () => {
            setError(null);
            try {
              await call('POST', '/sandbox/pair', { pairing_code: code.pairing_code, phone: code.phone });
              setEntered(true);
              await onChanged();
            } catch (failure) {
              setError(failure);
            }
          }}
        >
          Enter the code on the virtual phone
        </button>
      )}
      {entered && <Notice>Code entered. Waiting for the device to connect…</Notice>}
      <ErrorNotice error={error} />
    </form>
  );
}
