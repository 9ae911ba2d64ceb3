/**
 * API tokens: the list, creating one (its secret shown once, with a copy
 * button), revoking one. The token this tab is signed in with is marked, and
 * revoking it asks first and signs out.
 */
import { useEffect, useState } from 'preact/hooks';
import { ApiFailure, call, type Token } from '../api';
import { ConfirmButton, CopyButton, DataTable, ErrorNotice, Field, Notice, Time } from '../ui';

export function TokensView({ token, onSignOut }: { token: string; onSignOut: () => void }) {
  const [tokens, setTokens] = useState<Token[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [name, setName] = useState('');
  const [created, setCreated] = useState<{ name: string; token: string } | null>(null);
  const [notice, setNotice] = useState('');
  const failure = error instanceof ApiFailure ? error : null;

  const load = async () => {
    try {
      const answer = await call<Token[]>('GET', '/tokens');
      setTokens(answer.data);
    } catch (e) {
      setError(e);
    }
  };
  useEffect(() => {
    document.title = 'API tokens · Messaging Gateway';
    void load();
  }, []);

  const revoke = async (t: Token, current: boolean) => {
    setError(null);
    try {
      // The API asks for an explicit confirmation before it revokes the token of the request itself;
      // the page has just asked the person, so it passes theirs on.
      await call('DELETE', current ? `/tokens/${t.id}?confirm=true` : `/tokens/${t.id}`);
      if (current) return onSignOut();
      // The row goes with the notice that says so, not a list reload later.
      setTokens((list) => list?.filter((other) => other.id !== t.id) ?? list);
      setNotice(`Token “${t.name}” revoked.`);
      await load();
    } catch (e) {
      setError(e);
    }
  };

  return (
    <section aria-labelledby="tokens-title">
      <h1 id="tokens-title">API tokens</h1>
      <form
        class="card"
        aria-label="Create token"
        onSubmit={async (e) => {
          e.preventDefault();
          setError(null);
          setCreated(null);
          try {
            const answer = await call<{ token: string; name: string }>('POST', '/tokens', { name });
            setCreated({ name: answer.data.name, token: answer.data.token });
            setName('');
            await load();
          } catch (e) {
            setError(e);
          }
        }}
      >
        <Field label="Token name" value={name} onValue={setName} required errors={failure?.forField('name')} />
        <button type="submit">Create token</button>
      </form>
      {created !== null && (
        <div class="card secret-once" role="status">
          <p>
            New token “{created.name}”. Copy it now: it is shown only this once.
            <br />
            <code aria-label="New token secret">{created.token}</code>
          </p>
          <CopyButton value={created.token} label="Copy token" />
        </div>
      )}
      {notice !== '' && <Notice>{notice}</Notice>}
      <ErrorNotice error={error} />
      {tokens === null ? (
        <p aria-busy="true">Loading tokens…</p>
      ) : (
        <DataTable label="Tokens table" columns={['Name', 'Starts with', 'Created', 'Last used', 'Actions']}>
          {tokens.map((t) => {
            const current = token.startsWith(t.prefix);
            return (
              <tr key={t.id}>
                <th scope="row">
                  {t.name}
                  {current && <span class="badge badge-current"> in use by this page</span>}
                </th>
                <td>
                  <code>{t.prefix}…</code>
                </td>
                <td>
                  <Time value={t.created_at} />
                </td>
                <td>
                  <Time value={t.last_used_at} />
                </td>
                <td>
                  {current ? (
                    <ConfirmButton
                      label={`Revoke ${t.name}`}
                      question="This is the token this page is signed in with. Revoke it and sign out?"
                      confirmLabel="Yes, revoke and sign out"
                      onConfirm={() => revoke(t, true)}
                    />
                  ) : (
                    <ConfirmButton
                      label={`Revoke ${t.name}`}
                      question={`Revoke “${t.name}”? Clients using it get 401 at once.`}
                      confirmLabel="Yes, revoke"
                      onConfirm={() => revoke(t, false)}
                    />
                  )}
                </td>
              </tr>
            );
          })}
        </DataTable>
      )}
    </section>
  );
}
