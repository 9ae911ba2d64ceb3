// docs/internals.md, Accounts and tokens: the token API, bootstrap, and isolation between accounts.
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_TOKEN, newStoreLocation, noStoreAvailable, startGateway, type TestGateway } from '../helpers/gateway.js';
import { hashToken } from '../../src/accounts/tokens.js';
import { printBootstrapToken } from '../../src/app.js';

function capture() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      done();
    },
  });
  return { lines, logger: { level: 'info', stream } };
}

describe.skipIf(noStoreAvailable)('token API', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway();
  });
  afterAll(() => gw?.close());

  it('creates a token, shows its secret once, and lists it without the secret', async () => {
    const created = await gw.request('POST', '/tokens', { name: 'ci' });
    expect(created.status).toBe(201);
    expect(created.body.code).toBe(201);
    expect(created.body.message).toBe('Token created');
    const token = created.body.data.token as string;
    expect(token).toMatch(/^mgw_[A-Za-z0-9_-]{43}$/);
    expect(created.body.data.prefix).toBe(token.slice(0, 12));

    const list = await gw.request('GET', '/tokens');
    expect(list.status).toBe(200);
    expect(list.body.code).toBe(200);
    const entry = list.body.data.find((t: { id: number }) => t.id === created.body.data.id);
    expect(entry).toEqual({
      id: created.body.data.id,
      name: 'ci',
      prefix: token.slice(0, 12),
      created_at: expect.any(String),
      last_used_at: null,
    });
    expect(JSON.stringify(list.body)).not.toContain(token);

    // Only the hash is stored.
    const rows = await gw.app.store.db.selectFrom('api_tokens').selectAll().execute();
    expect(JSON.stringify(rows)).not.toContain(token);
    expect(rows.some((row) => row.token_hash === hashToken(token))).toBe(true);

    // The new token works and its use is recorded.
    expect((await gw.request('GET', '/devices', undefined, token)).status).toBe(200);
    // Recorded in the background, so the answer is not held up by a write.
    await expect
      .poll(async () => {
        const again = await gw.request('GET', '/tokens', undefined, token);
        return again.body.data.find((t: { id: number }) => t.id === created.body.data.id).last_used_at;
      })
      .not.toBeNull();
  });

  it('refuses a revoked token at once, although it was authenticated (and remembered) a moment before', async () => {
    const created = await gw.request('POST', '/tokens', { name: 'short-lived' });
    const token = created.body.data.token as string;
    expect((await gw.request('GET', '/devices', undefined, token)).status).toBe(200);
    expect((await gw.request('GET', '/devices', undefined, token)).status).toBe(200);
    // A near miss of a remembered token is not it.
    const nearMiss = token.slice(0, -1) + (token.endsWith('A') ? 'B' : 'A');
    expect((await gw.request('GET', '/devices', undefined, nearMiss)).status).toBe(401);
    expect((await gw.request('DELETE', `/tokens/${created.body.data.id}`)).status).toBe(200);
    const after = await gw.request('GET', '/devices', undefined, token);
    expect(after.status).toBe(401);
    expect(after.body).toEqual({ code: 401, status: 401, message: 'Unauthorized' });
  });

  it('answers 404 Token not found for an unknown or already revoked id', async () => {
    const created = await gw.request('POST', '/tokens', { name: 'twice' });
    expect((await gw.request('DELETE', `/tokens/${created.body.data.id}`)).body).toEqual({
      code: 200,
      status: 200,
      message: 'Token revoked',
      data: { id: created.body.data.id },
    });
    const again = await gw.request('DELETE', `/tokens/${created.body.data.id}`);
    expect(again.status).toBe(404);
    expect(again.body).toEqual({ code: 404, status: 404, message: 'Token not found' });
    expect((await gw.request('DELETE', '/tokens/999999')).body).toEqual({
      code: 404,
      status: 404,
      message: 'Token not found',
    });
    expect((await gw.request('DELETE', '/tokens/abc')).body.message).toBe('Token not found');
  });

  it('refuses to revoke the token making the request without ?confirm=true', async () => {
    const created = await gw.request('POST', '/tokens', { name: 'self-revoker' });
    const own = created.body.data as { id: number; token: string };
    for (const query of ['', '?confirm=false', '?confirm=yes']) {
      const refused = await gw.request('DELETE', `/tokens/${own.id}${query}`, undefined, own.token);
      expect(refused.status, query).toBe(400);
      if (query === '?confirm=yes') {
        expect(refused.body).toMatchObject({
          code: 400,
          status: 400,
          message: 'Validation failed',
          errors: { confirm: expect.any(Array) },
        });
      } else {
        expect(refused.body, query).toEqual({
          code: 400,
          status: 400,
          message: 'Confirmation required',
          error: 'this is the token making the request: revoking it locks this client out; repeat with ?confirm=true',
        });
      }
    }
    expect((await gw.request('GET', '/tokens', undefined, own.token)).status).toBe(200);
    // Another token revokes it without confirmation; an unknown id is still 404 first.
    const other = (await gw.request('POST', '/tokens', { name: 'other' })).body.data as { id: number; token: string };
    expect((await gw.request('DELETE', '/tokens/999999', undefined, other.token)).status).toBe(404);
    expect((await gw.request('DELETE', `/tokens/${other.id}?confirm=true`, undefined, other.token)).body).toEqual({
      code: 200,
      status: 200,
      message: 'Token revoked',
      data: { id: other.id },
    });
    expect((await gw.request('GET', '/tokens', undefined, other.token)).status).toBe(401);
    expect((await gw.request('DELETE', `/tokens/${own.id}`)).status).toBe(200);
    expect((await gw.request('GET', '/tokens', undefined, own.token)).status).toBe(401);
  });

  it('refuses a blank token name', async () => {
    for (const name of ['', '   ', '\t\n']) {
      const res = await gw.request('POST', '/tokens', { name });
      expect(res.status, JSON.stringify(name)).toBe(400);
      expect(res.body.message).toBe('Validation failed');
      expect(res.body.errors.name, JSON.stringify(name)).toEqual(['must not be blank']);
    }
  });

  it("hides another account's tokens and devices (404, as if missing)", async () => {
    const { accounts } = gw.app.services;
    const other = await accounts.createAccount('other-account');
    const otherToken = (await accounts.createToken(other.id, 'x')).token;

    const mine = await gw.request('POST', '/devices', { package: 'BETA', name: 'mine' });
    const theirs = await gw.request('POST', '/devices', { package: 'BETA', name: 'theirs' }, otherToken);
    expect(theirs.status).toBe(201);

    for (const [method, body] of [['GET'], ['PATCH', { name: 'stolen' }], ['DELETE']] as const) {
      const res = await gw.request(method, `/devices/${mine.body.data.id}`, body, otherToken);
      expect(res.status, method).toBe(404);
      expect(res.body).toEqual({ code: 404, status: 404, message: 'Device not found' });
    }
    const list = await gw.request('GET', '/devices', undefined, otherToken);
    expect(list.body.data.map((d: { name: string }) => d.name)).toEqual(['theirs']);
    expect(list.body.meta.total).toBe(1);

    const myTokens = await gw.request('GET', '/tokens');
    const revokeMine = await gw.request('DELETE', `/tokens/${myTokens.body.data[0].id}`, undefined, otherToken);
    expect(revokeMine.status).toBe(404);
    expect((await gw.request('GET', '/devices')).status).toBe(200);
  });
});

describe.skipIf(noStoreAvailable)('bootstrap', () => {
  it('prints one token on the first start of an empty store, and none on later starts', async () => {
    const location = await newStoreLocation();
    const first = capture();
    const gw1 = await startGateway({ location, config: { bootstrapToken: null }, build: { logger: first.logger } });
    // Building the gateway creates nothing: the token comes once it listens (main.ts calls printBootstrapToken then).
    expect(first.lines.some((line) => line.includes('api_token'))).toBe(false);
    expect(await gw1.app.services.accounts.listAccounts()).toEqual([]);
    await printBootstrapToken(gw1.app, gw1.config);
    const printed = first.lines.map((line) => JSON.parse(line)).filter((entry) => 'api_token' in entry);
    expect(printed).toHaveLength(1);
    const token = printed[0].api_token as string;
    expect(printed[0].msg).toContain('To make another: gateway tokens create --account default');
    expect(token).toMatch(/^mgw_/);
    expect((await gw1.request('GET', '/devices', undefined, token)).status).toBe(200);
    await gw1.close({ keepStore: true });

    const second = capture();
    const gw2 = await startGateway({ location, config: { bootstrapToken: null }, build: { logger: second.logger } });
    await printBootstrapToken(gw2.app, gw2.config);
    expect(second.lines.some((line) => line.includes('api_token'))).toBe(false);
    expect((await gw2.request('GET', '/devices', undefined, token)).status).toBe(200);
    await gw2.close();
  });

  it('makes GATEWAY_BOOTSTRAP_TOKEN the default account token, idempotently', async () => {
    const location = await newStoreLocation();
    const log = capture();
    const gw1 = await startGateway({ location, build: { logger: log.logger } });
    expect(log.lines.some((line) => line.includes(TEST_TOKEN))).toBe(false);
    await gw1.close({ keepStore: true });
    const gw2 = await startGateway({ location });
    const tokens = await gw2.request('GET', '/tokens');
    expect(tokens.body.data.filter((t: { name: string }) => t.name === 'bootstrap')).toHaveLength(1);
    const accounts = await gw2.app.services.accounts.listAccounts();
    expect(accounts.map((a) => a.name)).toEqual(['default']);
    await gw2.close();
  });
});
