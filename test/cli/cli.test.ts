// docs/internals.md, Accounts and tokens; Running and operating: the operator CLI works on the same store as the server:
// accounts, device limits, tokens (shown once, listed without secrets,
// revocable) and migrations, with clear errors and exit codes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, type CliIo } from '../../src/cli/main.js';
import { loadConfig } from '../../src/config.js';
import {
  TEST_TOKEN,
  newStoreLocation,
  noStoreAvailable,
  startGateway,
  type StoreLocation,
  type TestGateway,
} from '../helpers/gateway.js';

interface CliResult {
  code: number;
  out: string;
  err: string;
}

const TOKEN = /mgw_[A-Za-z0-9_-]{20,}/;

function envFor(location: StoreLocation): Record<string, string> {
  return {
    GATEWAY_DATA_DIR: location.dataDir,
    ...(location.databaseUrl === null ? {} : { DATABASE_URL: location.databaseUrl }),
  };
}

async function cli(location: StoreLocation, ...argv: string[]): Promise<CliResult> {
  return cliWith(location, {}, ...argv);
}

/** The CLI with settings beyond the store's (e.g. another network). */
async function cliWith(location: StoreLocation, env: Record<string, string>, ...argv: string[]): Promise<CliResult> {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIo = {
    env: { ...envFor(location), ...env },
    out: (line) => out.push(line),
    err: (line) => err.push(line),
  };
  const code = await runCli(argv, io);
  return { code, out: out.join('\n'), err: err.join('\n') };
}

function tokenIn(text: string): string {
  const match = TOKEN.exec(text);
  if (match === null) throw new Error(`no token in ${JSON.stringify(text)}`);
  return match[0];
}

describe.skipIf(noStoreAvailable)('gateway CLI', () => {
  let location: StoreLocation;
  let gw: TestGateway;
  let acmeToken: string;

  beforeAll(async () => {
    location = await newStoreLocation({ migrated: false });
    gw = await startGateway({ location });
  });
  afterAll(async () => {
    await gw?.close({ keepStore: true });
    await location?.drop();
  });

  it('creates an account and prints a token that authenticates against the server', async () => {
    const created = await cli(location, 'accounts', 'create', 'acme', '--max-devices', '3');
    expect(created).toMatchObject({ code: 0, err: '' });
    expect(created.out).toMatch(/Created account "acme" \(id \d+, device limit 3\)\./);
    acmeToken = tokenIn(created.out);
    expect(acmeToken).toMatch(/^mgw_[A-Za-z0-9_-]{43}$/);

    const devices = await gw.request('GET', '/devices', undefined, acmeToken);
    expect(devices.status).toBe(200);
    expect(devices.body.data).toEqual([]);
    expect(devices.body.meta.total).toBe(0);
  });

  it('lists accounts with their device limits', async () => {
    const listed = await cli(location, 'accounts', 'list');
    expect(listed.code).toBe(0);
    const [header, ...rows] = listed.out.split('\n');
    expect(header).toBe('id\tname\tmax_devices\tsandbox');
    const byName = new Map(
      rows.map((row) => row.split('\t')).map(([id, name, max, sandbox]) => [name, { id, max, sandbox }]),
    );
    // With the sandbox as the gateway's network, every account is a sandbox account.
    expect(byName.get('acme')).toEqual({ id: expect.stringMatching(/^\d+$/), max: '3', sandbox: 'true' });
    expect(byName.get('default')).toEqual({ id: expect.stringMatching(/^\d+$/), max: '10', sandbox: 'true' });
  });

  it('creates a sandbox account with --sandbox; beside WhatsApp only it is one', async () => {
    const created = await cli(location, 'accounts', 'create', 'lab', '--sandbox', '--max-devices', '2');
    expect(created).toMatchObject({ code: 0, err: '' });
    expect(created.out).toMatch(/^Created sandbox account "lab" \(id \d+, device limit 2\)\.\nAPI token/);
    const whatsapp = { GATEWAY_NETWORK: 'whatsapp', GATEWAY_NETWORK_KEY: Buffer.alloc(32, 1).toString('base64') };
    const listed = await cliWith(location, whatsapp, 'accounts', 'list');
    expect(listed.code).toBe(0);
    const rows = listed.out
      .split('\n')
      .slice(1)
      .map((row) => row.split('\t'));
    expect(rows.map(([, name, , sandbox]) => [name, sandbox])).toEqual([
      ['default', 'false'],
      ['acme', 'false'],
      ['lab', 'true'],
    ]);
    const stored = await gw.app.store.db.selectFrom('accounts').select(['name', 'sandbox']).orderBy('id').execute();
    expect(stored).toEqual([
      { name: 'default', sandbox: 0 },
      { name: 'acme', sandbox: 0 },
      { name: 'lab', sandbox: 1 },
    ]);
  });

  it("sets an account's device limit, which the server then enforces", async () => {
    const set = await cli(location, 'accounts', 'set-limit', 'acme', '1');
    expect(set).toEqual({ code: 0, out: 'Account "acme" may now have 1 devices.', err: '' });
    expect((await cli(location, 'accounts', 'list')).out).toMatch(/\tacme\t1\ttrue$/m);

    const first = await gw.request('POST', '/devices', { package: 'BETA', name: 'one' }, acmeToken);
    expect(first.status).toBe(201);
    const second = await gw.request('POST', '/devices', { package: 'BETA', name: 'two' }, acmeToken);
    expect(second.status).toBe(403);
    expect(second.body).toMatchObject({ code: 403, status: 403, message: 'Device limit exceeded' });
    // The default account is not affected by acme's limit.
    expect((await gw.request('POST', '/devices', { package: 'BETA', name: 'd' }, TEST_TOKEN)).status).toBe(201);
  });

  it('creates a named token that works', async () => {
    const created = await cli(location, 'tokens', 'create', '--account', 'acme', '--name', 'ci');
    expect(created.code).toBe(0);
    expect(created.out).toMatch(/^Token \d+ "ci" for account "acme" \(shown once, keep it\):\n/);
    const token = tokenIn(created.out);
    expect(token).not.toBe(acmeToken);
    const devices = await gw.request('GET', '/devices', undefined, token);
    expect(devices.status).toBe(200);
    expect(devices.body.data.map((d: { name: string }) => d.name)).toEqual(['one']);
  });

  it('lists tokens with their prefixes and never a secret', async () => {
    const other = tokenIn((await cli(location, 'tokens', 'create', '--account', 'acme')).out);
    const listed = await cli(location, 'tokens', 'list', '--account', 'acme');
    expect(listed.code).toBe(0);
    const [header, ...rows] = listed.out.split('\n');
    expect(header).toBe('id\tname\tprefix\tcreated_at\tlast_used_at');
    const entries = rows.map((row) => row.split('\t'));
    expect(entries.map((e) => e[1])).toEqual(expect.arrayContaining(['initial', 'ci', 'cli']));
    for (const entry of entries) {
      expect(entry).toHaveLength(5);
      expect(entry[2]).toMatch(/^mgw_.{1,12}$/);
      expect(entry[3]).toMatch(/^\d{4}-\d\d-\d\dT.*Z$/);
    }
    expect(entries.map((e) => e[2])).toContain(acmeToken.slice(0, 12));
    expect(entries.map((e) => e[2])).toContain(other.slice(0, 12));
    expect(listed.out).not.toContain(acmeToken);
    expect(listed.out).not.toContain(other);
    expect(listed.out).not.toMatch(/mgw_[A-Za-z0-9_-]{20,}/);
    // Another account's tokens are not listed.
    const defaults = await cli(location, 'tokens', 'list', '--account', 'default');
    expect(defaults.out).not.toContain(acmeToken.slice(0, 12));
  });

  it('revokes a token: it is refused with 401 from then on', async () => {
    const created = await cli(location, 'tokens', 'create', '--account', 'acme', '--name', 'doomed');
    const token = tokenIn(created.out);
    const id = /^Token (\d+) /.exec(created.out)?.[1] ?? '';
    expect(id).toMatch(/^\d+$/);
    // Never used through `gw`, so its short authentication cache cannot hide the revocation.
    const revoked = await cli(location, 'tokens', 'revoke', id, '--account', 'acme');
    expect(revoked).toEqual({ code: 0, out: `Token ${id} revoked.`, err: '' });
    const refused = await gw.request('GET', '/devices', undefined, token);
    expect(refused.status).toBe(401);
    expect(refused.body).toEqual({ code: 401, status: 401, message: 'Unauthorized' });
    expect((await cli(location, 'tokens', 'list', '--account', 'acme')).out).not.toMatch(/\tdoomed\t/);
    // The account's other tokens still work.
    expect((await gw.request('GET', '/devices', undefined, acmeToken)).status).toBe(200);

    // A token in use is refused too, at the latest by a server that has not cached it.
    const used = await cli(location, 'tokens', 'create', '--account', 'acme', '--name', 'used');
    const usedToken = tokenIn(used.out);
    expect((await gw.request('GET', '/devices', undefined, usedToken)).status).toBe(200);
    const usedId = /^Token (\d+) /.exec(used.out)?.[1] ?? '';
    expect((await cli(location, 'tokens', 'revoke', usedId, '--account', 'acme')).code).toBe(0);
    // Restarted rather than a second server beside it: one SQLite data directory serves one gateway.
    await gw.close({ keepStore: true });
    gw = await startGateway({ location });
    expect((await gw.request('GET', '/devices', undefined, usedToken)).status).toBe(401);

    const again = await cli(location, 'tokens', 'revoke', id, '--account', 'acme');
    expect(again.code).toBe(1);
    expect(again.err).toBe(`error: account "acme" has no active token ${id}`);
  });

  it("cannot revoke another account's token", async () => {
    const created = await cli(location, 'tokens', 'create', '--account', 'acme', '--name', 'mine');
    const token = tokenIn(created.out);
    const id = /^Token (\d+) /.exec(created.out)?.[1] ?? '';
    const attempt = await cli(location, 'tokens', 'revoke', id, '--account', 'default');
    expect(attempt.code).toBe(1);
    expect(attempt.err).toContain(`has no active token ${id}`);
    expect((await gw.request('GET', '/devices', undefined, token)).status).toBe(200);
  });

  it("changes a device's package: the allowance follows the plan, used messages keep counting unless reset", async () => {
    const created = await gw.request('POST', '/devices', { package: 'BETA', name: 'upgrade me' }, TEST_TOKEN);
    const id = created.body.data.id as number;
    const quota = async () => {
      const { data } = (await gw.request('GET', `/devices/${id}`, undefined, TEST_TOKEN)).body;
      return {
        package: data.package.code,
        used: data.subscription.quote_used,
        available: data.subscription.quote_available,
      };
    };
    // As if 240 of the 250 BETA messages had been sent.
    await gw.app.store.db.updateTable('devices').set({ quote_used: 240 }).where('id', '=', id).execute();

    expect(await cli(location, 'devices', 'package', String(id), 'STARTER60K')).toEqual({
      code: 0,
      out: `Device ${id} is now on STARTER60K (Starter): 10000 messages, 240 used, 9760 available.`,
      err: '',
    });
    expect(await quota()).toEqual({ package: 'STARTER60K', used: '240', available: '9760' });

    await gw.app.store.db.updateTable('devices').set({ quote_used: 300 }).where('id', '=', id).execute();
    expect((await cli(location, 'devices', 'package', String(id), 'BETA')).out).toBe(
      `Device ${id} is now on BETA (Beta Tester): 250 messages, 300 used, 0 available.`,
    );
    expect(await quota()).toEqual({ package: 'BETA', used: '300', available: '0' });

    expect((await cli(location, 'devices', 'package', String(id), 'BETA', '--reset-usage')).out).toBe(
      `Device ${id} is now on BETA (Beta Tester): 250 messages, 0 used, 250 available.`,
    );
    expect(await quota()).toEqual({ package: 'BETA', used: '0', available: '250' });
    expect((await cli(location, 'devices', 'package', String(id), 'STARTUP240K')).out).toBe(
      `Device ${id} is now on STARTUP240K (Startup): unlimited messages, 0 used, no limit available.`,
    );
    expect(await quota()).toEqual({ package: 'STARTUP240K', used: '0', available: '-1' });

    const unknownPlan = await cli(location, 'devices', 'package', String(id), 'GOLD');
    expect(unknownPlan).toMatchObject({ code: 1, out: '' });
    expect(unknownPlan.err).toContain('error: unknown package "GOLD"; one of BETA, STARTER60K, STARTUP240K, BUSINESS');
    const unknownDevice = await cli(location, 'devices', 'package', '999999', 'BETA');
    expect(unknownDevice).toMatchObject({ code: 1, out: '' });
    expect(unknownDevice.err).toContain('error: no device 999999');
    expect(await quota()).toEqual({ package: 'STARTUP240K', used: '0', available: '-1' });
  });

  it.each([
    [['tokens', 'create', '--account', 'nobody'], 'error: no account named "nobody"'],
    [['tokens', 'list', '--account', 'nobody'], 'error: no account named "nobody"'],
    [['tokens', 'revoke', '1', '--account', 'nobody'], 'error: no account named "nobody"'],
    [['accounts', 'set-limit', 'nobody', '5'], 'error: no account named "nobody"'],
    [['accounts', 'create', 'acme'], 'error: account "acme" already exists'],
    [['accounts', 'create', 'bad name!'], 'error: account names are 1-64 letters'],
    [['accounts', 'create', 'numbers', '--max-devices', 'lots'], 'error: "lots" is not a whole number'],
    [['accounts', 'set-limit', 'acme', '2.5'], 'error: "2.5" is not a whole number'],
    [['tokens', 'revoke', 'abc', '--account', 'acme'], 'error: "abc" is not a whole number'],
  ])('%j exits 1 with a clear message', async (argv, message) => {
    const result = await cli(location, ...argv);
    expect(result.code).toBe(1);
    expect(result.err).toContain(message);
    expect(result.out).toBe('');
  });

  it('changes nothing when a command fails', async () => {
    const listed = (await cli(location, 'accounts', 'list')).out;
    expect(listed).not.toMatch(/\tnumbers\t/);
    expect(listed).not.toMatch(/\tbad name!\t/);
    expect(listed).toMatch(/\tacme\t1\ttrue$/m);
  });

  it.each([
    [['frobnicate'], /unknown command 'frobnicate'/],
    [['accounts', 'delete', 'acme'], /unknown command 'delete'/],
    [['tokens', 'list'], /required option '--account <name>' not specified/],
    [['accounts', 'create'], /missing required argument 'name'/],
  ])('usage error %j exits 2', async (argv, message) => {
    const result = await cli(location, ...argv);
    expect(result.code).toBe(2);
    expect(result.err).toMatch(message);
  });

  it('prints help and exits 0', async () => {
    const result = await cli(location, '--help');
    expect(result.code).toBe(0);
    expect(result.out).toMatch(/Usage: gateway/);
    expect(result.out).toContain('accounts');
    expect(result.out).toContain('tokens');
    expect(result.out).toContain('migrate');
  });

  it('keygen prints a fresh 32-byte base64 key each time, also where the configured key is missing', async () => {
    const io = (out: string[], err: string[]): CliIo => ({
      // The very settings keygen exists to fix: the whatsapp network with no key yet.
      env: { GATEWAY_NETWORK: 'whatsapp' },
      out: (line) => out.push(line),
      err: (line) => err.push(line),
    });
    const keys: string[] = [];
    for (let i = 0; i < 2; i += 1) {
      const out: string[] = [];
      const err: string[] = [];
      expect(await runCli(['keygen'], io(out, err))).toBe(0);
      expect(err).toEqual([]);
      expect(out).toHaveLength(1);
      keys.push(out[0]!);
    }
    for (const key of keys) {
      expect(key).toMatch(/^[A-Za-z0-9+/]{43}=$/);
      expect(Buffer.from(key, 'base64')).toHaveLength(32);
      expect(loadConfig({ GATEWAY_NETWORK: 'whatsapp', GATEWAY_NETWORK_KEY: key }).networkKey?.current).toEqual(
        Buffer.from(key, 'base64'),
      );
    }
    expect(keys[0]).not.toBe(keys[1]);
  });

  it('a command that needs the store says which setting is wrong, with exit code 1', async () => {
    const err: string[] = [];
    const code = await runCli(['accounts', 'list'], {
      env: { GATEWAY_NETWORK: 'whatsapp' },
      out: () => undefined,
      err: (line) => err.push(line),
    });
    expect(code).toBe(1);
    expect(err.join('\n')).toMatch(/^Configuration error: GATEWAY_NETWORK_KEY is required/);
  });

  it('migrate says there is nothing to do on a migrated store', async () => {
    expect(await cli(location, 'migrate')).toEqual({ code: 0, out: 'Nothing to migrate.', err: '' });
  });

  it('migrate runs the migrations on a fresh store, then has nothing left', async () => {
    const fresh = await newStoreLocation({ migrated: false });
    try {
      // A store that was never set up is created only when asked (docs/cli.md).
      const refused = await cli(fresh, 'migrate');
      expect(refused.code).toBe(1);
      expect(refused.err).toMatch(/^error: no gateway store at .*pass --create to create this store\.$/);
      const first = await cli(fresh, 'migrate', '--create');
      expect(first.code).toBe(0);
      expect(first.out).toMatch(/^Ran: 001-foundation/);
      expect((await cli(fresh, 'migrate')).out).toBe('Nothing to migrate.');
    } finally {
      await fresh.drop();
    }
  });
});
