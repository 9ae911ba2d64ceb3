// docs/internals.md, Accounts and tokens: a revoked token answers 401 at once. A check that read the
// token from the store before the revocation, and finishes after it, must not
// put the token back into the in-memory cache (it would then be accepted for
// the cache's lifetime after its revocation).
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { tokensRepository } from '../../src/accounts/repository.js';
import { noStoreAvailable, startGateway, type TestGateway } from '../helpers/gateway.js';

describe.skipIf(noStoreAvailable)('revoking a token while it is being checked', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway();
  });
  afterAll(() => gw?.close());
  afterEach(() => vi.restoreAllMocks());

  it('does not cache a check that read the token before it was revoked', async () => {
    const accounts = gw.app.services.accounts;
    const created = await gw.request('POST', '/tokens', { name: 'raced' });
    const header = `Bearer ${created.body.data.token}`;
    const owner = await accounts.findAccount('default');

    // The store answers the lookup (the token is valid then), and the answer is held back until after the revocation.
    const lookup = tokensRepository.findActiveByHash;
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let read!: () => void;
    const wasRead = new Promise<void>((resolve) => (read = resolve));
    vi.spyOn(tokensRepository, 'findActiveByHash').mockImplementationOnce(async (db, hash) => {
      const row = await lookup(db, hash);
      read();
      await gate;
      return row;
    });

    const checking = accounts.authenticate(header);
    await wasRead;
    expect(await accounts.revokeToken(owner.id, created.body.data.id)).toBe(true);
    release();
    // The check that began before the revocation may pass (it read a valid token)...
    expect(await checking).not.toBeNull();
    // ...but nothing after the revocation may, in this process or through the API.
    expect(accounts.authenticateCached(header)).toBeUndefined();
    expect(await accounts.authenticate(header)).toBeNull();
    expect((await gw.request('GET', '/devices', undefined, created.body.data.token)).status).toBe(401);
  });

  it('does not cache a check that began after the revocation started but read the token before it committed', async () => {
    const accounts = gw.app.services.accounts;
    const created = await gw.request('POST', '/tokens', { name: 'raced after' });
    const header = `Bearer ${created.body.data.token}`;
    const owner = await accounts.findAccount('default');
    // What a read before the commit finds, taken from a real check (the cache is then emptied).
    const lookup = tokensRepository.findActiveByHash;
    let stillValid: Awaited<ReturnType<typeof lookup>>;
    const spy = vi.spyOn(tokensRepository, 'findActiveByHash').mockImplementationOnce(async (db, hash) => {
      stillValid = await lookup(db, hash);
      return stillValid;
    });
    expect(await accounts.authenticate(header)).not.toBeNull();
    expect(stillValid).toBeDefined();
    accounts.revokedElsewhere();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let read!: () => void;
    const wasRead = new Promise<void>((resolve) => (read = resolve));
    spy.mockImplementationOnce(async () => {
      read();
      await gate;
      return stillValid;
    });

    // The revocation starts first; the check starts while it is under way, has read the still valid token, and
    // finishes after the commit and after the revocation dropped the cached entries.
    const revoking = accounts.revokeToken(owner.id, created.body.data.id);
    const checking = accounts.authenticate(header);
    await wasRead;
    expect(await revoking).toBe(true);
    release();
    expect(await checking).not.toBeNull();
    expect(accounts.authenticateCached(header)).toBeUndefined();
    expect(await accounts.authenticate(header)).toBeNull();
  });
});
