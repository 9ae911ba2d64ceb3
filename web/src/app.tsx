/**
 * The dashboard's shell: sign-in, the banner naming the network (the one the
 * signed-in account's devices are on: a sandbox account's is the sandbox, also
 * on a gateway running WhatsApp), the account and the node, navigation, and
 * which view the hash route shows.
 */
import { useEffect, useState } from 'preact/hooks';
import { ApiFailure, call, storeToken, storedToken, whenUnauthorized, type GatewayInfo } from './api';
import { useHasRoute, useRoute } from './hooks';
import { ErrorNotice } from './ui';
import { DevicesView } from './views/devices';
import { DeviceView } from './views/device';
import { TokensView } from './views/tokens';
import { PhonesView } from './views/phones';
import { AccountWebhooksView } from './views/account-webhooks';

export function App() {
  const [token, setToken] = useState(storedToken);
  const [info, setInfo] = useState<GatewayInfo | null>(null);
  const [expired, setExpired] = useState(false);

  const signOut = (why: 'user' | 'expired') => {
    storeToken(null);
    setToken(null);
    setInfo(null);
    setExpired(why === 'expired');
  };
  useEffect(() => whenUnauthorized(() => signOut('expired')), []);
  useEffect(() => {
    if (token === null || info !== null) return;
    // A token kept from earlier in this tab: checked once; a 401 signs out through whenUnauthorized.
    call<GatewayInfo>('GET', '/gateway').then(
      (answer) => setInfo(answer.data),
      (failure: unknown) => {
        if (!(failure instanceof ApiFailure && failure.status === 401)) {
          storeToken(null);
          setToken(null);
        }
      },
    );
  }, [token, info]);

  if (token === null || info === null) {
    return (
      <SignIn
        expired={expired}
        onSignedIn={(t, i) => {
          storeToken(t);
          setToken(t);
          setInfo(i);
          setExpired(false);
        }}
        waiting={token !== null}
      />
    );
  }
  return <Shell info={info} token={token} onSignOut={() => signOut('user')} />;
}

function SignIn({
  onSignedIn,
  expired,
  waiting,
}: {
  onSignedIn: (token: string, info: GatewayInfo) => void;
  expired: boolean;
  waiting: boolean;
}) {
  const [value, setValue] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    document.title = 'Sign in · Messaging Gateway';
  }, []);
  if (waiting) return <main class="signin" aria-busy="true" />;
  return (
    <main class="signin">
      <h1>Messaging Gateway</h1>
      <form
        onSubmit={async (e) => {
          e.preventDefault();
          const token = value.trim();
          if (token === '') return setError(new Error('Enter an API token'));
          setBusy(true);
          setError(null);
          try {
            const answer = await call<GatewayInfo>('GET', '/gateway', undefined, token);
            onSignedIn(token, answer.data);
          } catch (failure) {
            setError(failure);
          } finally {
            setBusy(false);
          }
        }}
      >
        <label for="signin-token">API token</label>
        <input
          id="signin-token"
          type="password"
          autoComplete="off"
          spellcheck={false}
          value={value}
          onInput={(e) => setValue((e.target as HTMLInputElement).value)}
          aria-describedby="signin-help"
        />
        <p id="signin-help" class="hint">
          The token printed once in the gateway’s log at its first start, or one made with <code>gateway tokens</code>.
          It is kept in this browser tab only.
        </p>
        <button type="submit" disabled={busy}>
          Sign in
        </button>
        {expired && error === null && (
          <p role="alert" class="error">
            The token stopped working (revoked?). Sign in again.
          </p>
        )}
        <ErrorNotice error={error} />
      </form>
    </main>
  );
}

function Shell({ info, token, onSignOut }: { info: GatewayInfo; token: string; onSignOut: () => void }) {
  const route = useRoute();
  const parts = route.split('/').filter(Boolean);
  const sandbox = info.sandbox_control;
  // The account's webhooks: offered when this gateway has the routes.
  const hasWebhooks = useHasRoute('/webhooks');
  const webhooks = hasWebhooks === true;
  let view;
  let section = parts[0] ?? 'devices';
  if (section === 'devices' && parts[1] !== undefined) {
    view = <DeviceView id={Number(parts[1])} tab={parts[2] ?? 'overview'} rest={parts.slice(3)} info={info} />;
  } else if (section === 'tokens') {
    view = <TokensView token={token} onSignOut={onSignOut} />;
  } else if (section === 'webhooks' && hasWebhooks === null) {
    view = <p aria-busy="true">Loading…</p>;
  } else if (section === 'webhooks' && webhooks) {
    view = <AccountWebhooksView id={parts[1] === undefined ? undefined : decodeURIComponent(parts[1])} />;
  } else if (section === 'phones' && sandbox) {
    view = <PhonesView />;
  } else {
    section = 'devices';
    view = <DevicesView info={info} />;
  }
  const nav = [
    { href: '#/devices', label: 'Devices', key: 'devices' },
    ...(webhooks ? [{ href: '#/webhooks', label: 'Webhooks', key: 'webhooks' }] : []),
    { href: '#/tokens', label: 'API tokens', key: 'tokens' },
    ...(sandbox ? [{ href: '#/phones', label: 'Virtual phones', key: 'phones' }] : []),
  ];
  return (
    <>
      <a class="skip" href="#main" onClick={(e) => (e.preventDefault(), document.getElementById('main')?.focus())}>
        Skip to content
      </a>
      <header class="banner">
        <div class="brand">Messaging Gateway</div>
        <p class={`network network-${info.network}`} aria-label="Network, account and node">
          {info.network === 'sandbox' ? 'Sandbox network (simulated, offline)' : 'WhatsApp network'} · account{' '}
          <strong>{info.account.name}</strong> · node <strong>{info.server.name}</strong> · v{info.version}
        </p>
        <nav aria-label="Main">
          {nav.map((n) => (
            <a key={n.key} href={n.href} aria-current={section === n.key ? 'page' : undefined}>
              {n.label}
            </a>
          ))}
        </nav>
        <button type="button" onClick={onSignOut}>
          Sign out
        </button>
      </header>
      <main id="main" tabIndex={-1}>
        {view}
      </main>
    </>
  );
}
