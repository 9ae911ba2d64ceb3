// The guarded dispatcher on its own, as webhook delivery will use it: refusals surface as
// BlockedAddressError (directly from undici.request, as the cause of undici.fetch), the resolved
// and the connected address are both checked, and nothing reaches a refused server.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fetch, request } from 'undici';
import type { LookupAddress } from 'node:dns';
import {
  BlockedAddressError,
  createGuardedDispatcher,
  createGuardedLookup,
  findBlockedAddressError,
  isPublicAddress,
} from '../../src/outbound/index.js';
import type { TestServer } from './helpers.js';
import { fakeLookup, onlyAddresses, startServer } from './helpers.js';

let allowed: TestServer; // 127.0.0.1
let refused: TestServer; // 127.0.0.2
const agents: Array<{ close(): Promise<void> }> = [];

function agent(options: Parameters<typeof createGuardedDispatcher>[0]) {
  const created = createGuardedDispatcher(options);
  agents.push(created);
  return created;
}

beforeEach(async () => {
  allowed = await startServer((_req, res) => res.end('allowed'), '127.0.0.1');
  refused = await startServer((_req, res) => res.end('refused'), '127.0.0.2');
});

afterEach(async () => {
  await Promise.all(agents.splice(0).map((a) => a.close()));
  await Promise.all([allowed.close(), refused.close()]);
});

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection');
}

describe('createGuardedDispatcher', () => {
  const policy = onlyAddresses('127.0.0.1');

  it('lets a request to an allowed address through', async () => {
    const dispatcher = agent({ policy });
    const response = await request(allowed.url('/'), { dispatcher });
    expect(await response.body.text()).toBe('allowed');
  });

  it('refuses an IP literal before connecting, as a BlockedAddressError from request()', async () => {
    const dispatcher = agent({ policy });
    const error = await rejection(request(refused.url('/'), { dispatcher }));
    expect(error).toBeInstanceOf(BlockedAddressError);
    expect((error as BlockedAddressError).code).toBe('ERR_BLOCKED_ADDRESS');
    expect((error as BlockedAddressError).address).toBe('127.0.0.2');
    expect((error as Error).message).not.toContain('127.0.0.2');
    expect(refused.connections()).toBe(0);
  });

  it('reports the refusal in the cause chain of fetch()', async () => {
    const dispatcher = agent({ policy });
    const error = await rejection(fetch(refused.url('/'), { dispatcher }));
    expect(error).toBeInstanceOf(TypeError);
    expect(findBlockedAddressError(error)).toBeInstanceOf(BlockedAddressError);
    expect(refused.connections()).toBe(0);
  });

  it('checks the address a name resolves to', async () => {
    const dispatcher = agent({ policy, lookup: fakeLookup({ 'hook.example.test': '127.0.0.2' }) });
    const error = await rejection(request(`http://hook.example.test:${refused.port}/`, { dispatcher }));
    expect(error).toBeInstanceOf(BlockedAddressError);
    expect((error as BlockedAddressError).hostname).toBe('hook.example.test');
    expect(refused.connections()).toBe(0);
  });

  it('refuses a name when any of its addresses is refused', async () => {
    const dispatcher = agent({ policy, lookup: fakeLookup({ 'mixed.example.test': ['127.0.0.1', '127.0.0.2'] }) });
    const error = await rejection(request(`http://mixed.example.test:${allowed.port}/`, { dispatcher }));
    expect(error).toBeInstanceOf(BlockedAddressError);
    expect(allowed.connections()).toBe(0);
  });

  it('re-checks every new connection: a name that rebinds between requests is refused', async () => {
    let calls = 0;
    const lookup = fakeLookup({ 'rebind.example.test': () => (++calls === 1 ? '127.0.0.1' : '127.0.0.2') });
    // No keep-alive, so the second request needs a new connection (and a new lookup).
    const dispatcher = agent({ policy, lookup, keepAlive: false });
    const first = await request(`http://rebind.example.test:${allowed.port}/`, { dispatcher });
    expect(await first.body.text()).toBe('allowed');
    const error = await rejection(request(`http://rebind.example.test:${allowed.port}/`, { dispatcher }));
    expect(error).toBeInstanceOf(BlockedAddressError);
    expect(calls).toBe(2);
  });

  it('checks the peer actually connected to, not only the lookup answer', async () => {
    // A policy that says yes once (to the lookup) and no afterwards stands in for any path that
    // would bypass the lookup check: the connected socket is judged again before use.
    let asked = 0;
    const dispatcher = agent({ policy: () => ++asked === 1, lookup: fakeLookup({ 'peer.example.test': '127.0.0.1' }) });
    const error = await rejection(request(`http://peer.example.test:${allowed.port}/`, { dispatcher }));
    expect(error).toBeInstanceOf(BlockedAddressError);
    expect(asked).toBe(2);
    expect(allowed.requests()).toBe(0);
  });

  it('fails closed when the policy throws', async () => {
    const dispatcher = agent({
      policy: () => {
        throw new Error('policy bug');
      },
    });
    const error = await rejection(request(allowed.url('/'), { dispatcher }));
    expect(error).toBeInstanceOf(BlockedAddressError);
    expect(allowed.connections()).toBe(0);
  });

  it.each([
    'http://127.0.0.1:PORT/',
    'http://[::1]:PORT/',
    'http://[::ffff:127.0.0.1]:PORT/',
    'http://2130706433:PORT/',
  ])('with the public-only policy refuses %s without connecting', async (template) => {
    const dispatcher = agent({ policy: isPublicAddress, lookup: fakeLookup({}) });
    const error = await rejection(request(template.replace('PORT', String(allowed.port)), { dispatcher }));
    expect(error).toBeInstanceOf(BlockedAddressError);
    expect(allowed.connections()).toBe(0);
  });

  it('with the public-only policy refuses a name resolving to loopback', async () => {
    const dispatcher = agent({ policy: isPublicAddress, lookup: fakeLookup({ localhost: ['127.0.0.1', '::1'] }) });
    const error = await rejection(request(`http://localhost:${allowed.port}/`, { dispatcher }));
    expect(error).toBeInstanceOf(BlockedAddressError);
    expect(allowed.connections()).toBe(0);
  });

  it("'allow-all' connects anywhere (development and tests)", async () => {
    const dispatcher = agent({ policy: 'allow-all' });
    const response = await request(refused.url('/'), { dispatcher });
    expect(await response.body.text()).toBe('refused');
  });

  it('reuses connections by default, and opens one per request without keep-alive', async () => {
    const send = async (dispatcher: ReturnType<typeof agent>) => {
      const start = allowed.connections();
      for (let i = 0; i < 4; i++) await (await request(allowed.url('/'), { dispatcher })).body.text();
      return allowed.connections() - start;
    };
    // undici may open a second connection while the first is being set up; reuse still shows.
    expect(await send(agent({ policy }))).toBeLessThan(4);
    expect(await send(agent({ policy, keepAlive: false }))).toBe(4);
  });

  it('passes DNS failures through unchanged', async () => {
    const dispatcher = agent({ policy, lookup: fakeLookup({}) });
    const error = await rejection(request('http://nowhere.example.test/', { dispatcher }));
    expect(findBlockedAddressError(error)).toBeUndefined();
    expect((error as NodeJS.ErrnoException).code).toBe('ENOTFOUND');
  });
});

describe('createGuardedLookup', () => {
  function resolve(all: boolean, answer: string | string[]) {
    const lookup = createGuardedLookup(onlyAddresses('127.0.0.1'), fakeLookup({ 'x.test': answer }));
    return new Promise<{ err: Error | null; address: string | LookupAddress[]; family?: number }>((done) => {
      lookup('x.test', { all }, (err, address, family) => done({ err, address, family }));
    });
  }

  it('answers in the single-address form when asked without `all`', async () => {
    expect(await resolve(false, '127.0.0.1')).toEqual({ err: null, address: '127.0.0.1', family: 4 });
  });

  it('answers in the list form when asked with `all`', async () => {
    expect(await resolve(true, ['127.0.0.1'])).toEqual({
      err: null,
      address: [{ address: '127.0.0.1', family: 4 }],
      family: undefined,
    });
  });

  it('refuses in both forms', async () => {
    expect((await resolve(false, '127.0.0.2')).err).toBeInstanceOf(BlockedAddressError);
    expect((await resolve(true, ['127.0.0.2'])).err).toBeInstanceOf(BlockedAddressError);
  });

  it('treats an empty answer as not found', async () => {
    const { err } = await resolve(true, []);
    expect((err as NodeJS.ErrnoException).code).toBe('ENOTFOUND');
  });
});
