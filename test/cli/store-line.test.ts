// The CLI never silently opens another store (issue 22, item 9): run as real
// processes, every command names on stderr, in one line, the store it opened
// (stdout stays the command's output), and a store that was never set up is
// created only with --create. Run where the gateway's settings are missing, it
// used to create ./data/gateway.sqlite and put accounts and tokens there.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { BUILD_TIMEOUT_MS, BUILT_CLI, ensureBuilt } from '../helpers/built.js';
import { newStoreLocation, noStoreAvailable, storeKind, type StoreLocation } from '../helpers/gateway.js';

const PASSWORD = 'not-shown-anywhere';

interface Exit {
  code: number | null;
  stdout: string;
  stderr: string;
}

function run(args: string[], env: Record<string, string>, cwd: string): Promise<Exit> {
  const child = spawn(process.execPath, [BUILT_CLI, ...args], {
    cwd,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: cwd, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, stdout, stderr })));
}

/** The store's settings as the gateway would get them; PostgreSQL's URL carries a password that must never show. */
function settingsOf(location: StoreLocation): Record<string, string> {
  if (location.databaseUrl === null) return { GATEWAY_DATA_DIR: location.dataDir };
  const url = new URL(location.databaseUrl);
  url.password = PASSWORD;
  return { DATABASE_URL: url.toString() };
}

/** The line the CLI must print for this store. */
async function storeLine(location: StoreLocation): Promise<string> {
  if (location.databaseUrl === null) return `Store: sqlite ${join(location.dataDir, 'gateway.sqlite')}`;
  const url = new URL(location.databaseUrl);
  const client = new pg.Client({ connectionString: location.databaseUrl });
  await client.connect();
  const { rows } = await client.query<{ schema: string }>('select current_schema() as schema');
  await client.end();
  return `Store: postgres ${url.username}@${url.host}${url.pathname}, schema ${rows[0]!.schema}`;
}

async function gatewayTablesIn(location: StoreLocation): Promise<boolean> {
  if (location.databaseUrl === null) return existsSync(join(location.dataDir, 'gateway.sqlite'));
  const client = new pg.Client({ connectionString: location.databaseUrl });
  await client.connect();
  const { rows } = await client.query<{ t: string | null }>(
    "select to_regclass(quote_ident(current_schema()) || '.kysely_migration')::text as t",
  );
  await client.end();
  return rows[0]!.t !== null;
}

describe.skipIf(noStoreAvailable)('the CLI names its store and creates one only when told', () => {
  beforeAll(() => ensureBuilt(), BUILD_TIMEOUT_MS);
  const cleanup: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const step of cleanup.splice(0)) await step();
  });

  it('refuses a fresh store without --create, creates it with, then names it on every command', async () => {
    const location = await newStoreLocation({ migrated: false });
    cleanup.push(() => location.drop());
    const env = settingsOf(location);
    const line = await storeLine(location);

    const refused = await run(['accounts', 'create', 'acme'], env, location.dataDir);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toBe('');
    const [named, error, ...rest] = refused.stderr.split('\n');
    expect(named).toBe(line);
    expect(error).toBe(
      `error: no gateway store at ${line.slice('Store: '.length)}; the CLI would create a new, empty one that the ` +
        'gateway does not use. Run it with the gateway’s settings (GATEWAY_DATA_DIR, or DATABASE_URL), or pass ' +
        '--create to create this store.',
    );
    expect(rest).toEqual(['']);
    expect(await gatewayTablesIn(location)).toBe(false);

    const created = await run(['accounts', 'create', 'acme', '--create'], env, location.dataDir);
    expect(created.stderr).toBe(`${line}\n`);
    expect(created.code).toBe(0);
    expect(created.stdout).toMatch(/^Created account "acme" .*\nAPI token \(shown once, keep it\): mgw_\S+\n$/);

    // Now set up: no --create needed, stdout is the table alone, stderr the one line.
    const listed = await run(['accounts', 'list'], env, location.dataDir);
    expect(listed).toEqual({
      code: 0,
      stdout: expect.stringMatching(/^id\tname\tmax_devices\tsandbox\n\d+\tacme\t10\ttrue\n$/),
      stderr: `${line}\n`,
    });
    expect(listed.stderr + created.stderr + refused.stderr).not.toContain(PASSWORD);
  });

  it.skipIf(storeKind !== 'sqlite')(
    'run with none of the gateway’s settings, it names ./data under its working directory and creates nothing',
    async () => {
      const cwd = await mkdtemp(join(tmpdir(), 'gw-cli-cwd-'));
      cleanup.push(() => rm(cwd, { recursive: true, force: true }));
      const refused = await run(['tokens', 'create', '--account', 'default'], {}, cwd);
      expect(refused.code).toBe(1);
      expect(refused.stderr.split('\n')[0]).toBe(`Store: sqlite ${join(cwd, 'data', 'gateway.sqlite')}`);
      expect(refused.stderr).toContain('pass --create');
      expect(existsSync(join(cwd, 'data'))).toBe(false);
    },
  );

  it.skipIf(storeKind !== 'sqlite')(
    'an empty SQLite file left by something else is not the gateway’s store either',
    async () => {
      const dir = await mkdtemp(join(tmpdir(), 'gw-cli-empty-'));
      cleanup.push(() => rm(dir, { recursive: true, force: true }));
      await mkdir(dir, { recursive: true });
      const { default: Database } = await import('better-sqlite3');
      new Database(join(dir, 'gateway.sqlite')).close();
      const refused = await run(['accounts', 'list'], { GATEWAY_DATA_DIR: dir }, dir);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain('pass --create');
    },
  );
});
