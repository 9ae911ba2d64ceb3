// docs/internals.md, Clusters and issue 14: with SQLite there is one gateway per data
// directory. A second gateway process on the same directory stops at once
// with one line naming the directory and what to do (exit code 1), also while
// the first is busy; the lock dies with its holder, so after a SIGKILL the
// next start is not blocked. The operator's CLI still works beside a running
// gateway. Real child processes throughout, of the build (`npm start` and `npm run cli` run dist/), made current
// first.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Agent } from 'undici';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DataDirInUseError } from '../../src/store/data-dir-lock.js';
import { BUILD_TIMEOUT_MS, BUILT_CLI, BUILT_MAIN, ensureBuilt } from '../helpers/built.js';
import { newStoreLocation, startGateway, storeKind, type StoreLocation } from '../helpers/gateway.js';
import { httpClient, startGatewayProcess, type GatewayProcess } from '../helpers/gateway-process.js';

/** Starting takes seconds, and several times longer on a shared, loaded machine. */
const START_MS = 60_000;
const TEST_MS = 3 * START_MS;

interface Exit {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a script to its end (the gateway's entry or the CLI) on the data directory. */
function run(script: string, args: string[], dataDir: string): Promise<Exit> {
  const child = spawn(process.execPath, [script, ...args], {
    cwd: dataDir,
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: dataDir,
      HOST: '127.0.0.1',
      PORT: '0',
      GATEWAY_DATA_DIR: dataDir,
      GATEWAY_BOOTSTRAP_TOKEN: 'mgw_test_token_for_the_second_process_00',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  // A refused start must end by itself; a gateway that started after all is stopped and shows up as exit code 0.
  const timer = setTimeout(() => child.kill('SIGTERM'), START_MS);
  return new Promise((resolve) => {
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

function refusal(dataDir: string, pid: number): string {
  return (
    `Store error: another gateway process (pid ${pid}) is already using the data directory ${dataDir}. ` +
    'One SQLite data directory serves one gateway: stop the other one first, or give this one its own ' +
    'GATEWAY_DATA_DIR (several gateways on one store need PostgreSQL, DATABASE_URL).'
  );
}

describe.runIf(storeKind === 'sqlite')('one gateway per SQLite data directory', () => {
  const cleanup: Array<() => Promise<void>> = [];
  beforeAll(() => ensureBuilt(), BUILD_TIMEOUT_MS);
  afterEach(async () => {
    for (const step of cleanup.splice(0).reverse()) await step();
  });

  async function location(): Promise<StoreLocation> {
    const made = await newStoreLocation();
    cleanup.push(() => made.drop());
    return made;
  }
  async function gateway(where: StoreLocation): Promise<GatewayProcess> {
    const proc = await startGatewayProcess(where, {}, { timeoutMs: START_MS, built: true });
    cleanup.push(() => proc.stop());
    return proc;
  }
  function client(proc: GatewayProcess) {
    const agent = new Agent();
    cleanup.push(() => agent.close());
    return httpClient(proc.port, agent);
  }

  it(
    'refuses a second process at once with one line naming the directory and what to do; the first runs on',
    async () => {
      const where = await location();
      const first = await gateway(where);
      const second = await run(BUILT_MAIN, [], where.dataDir);
      expect(second.code).toBe(1);
      expect(second.stderr.trim().split('\n'), second.stderr).toEqual([refusal(where.dataDir, first.child.pid!)]);
      expect(second.stdout + second.stderr).not.toMatch(/\n\s+at /);
      const api = client(first);
      expect((await api('GET', '/devices')).status).toBe(200);
    },
    TEST_MS,
  );

  it(
    'lets the next gateway start at once after the first was killed with SIGKILL',
    async () => {
      const where = await location();
      const first = await startGatewayProcess(where, {}, { timeoutMs: START_MS, built: true });
      await first.kill();
      // The holder's pid file is left behind by a SIGKILL; the lock is not.
      expect(existsSync(join(where.dataDir, 'gateway.pid'))).toBe(true);
      const next = await gateway(where);
      expect((await client(next)('GET', '/devices')).status).toBe(200);
      // And the new holder is the one named to a third.
      const third = await run(BUILT_MAIN, [], where.dataDir);
      expect(third.code).toBe(1);
      expect(third.stderr.trim()).toBe(refusal(where.dataDir, next.child.pid!));
    },
    TEST_MS,
  );

  it(
    'lets the next gateway start after the first stopped with SIGTERM, and leaves no pid file',
    async () => {
      const where = await location();
      const first = await startGatewayProcess(where, {}, { timeoutMs: START_MS, built: true });
      await first.stop();
      expect(existsSync(join(where.dataDir, 'gateway.pid'))).toBe(false);
      const next = await gateway(where);
      expect((await client(next)('GET', '/devices')).status).toBe(200);
    },
    TEST_MS,
  );

  it(
    'keeps the CLI working beside a running gateway: an account made by the CLI is served at once',
    async () => {
      const where = await location();
      const running = await gateway(where);
      const made = await run(BUILT_CLI, ['accounts', 'create', 'beside', '--max-devices', '2'], where.dataDir);
      // Only the line naming the store it opened (the gateway's, which therefore needs no --create).
      expect(made.stderr).toBe(`Store: sqlite ${join(where.dataDir, 'gateway.sqlite')}\n`);
      expect(made.code).toBe(0);
      const token = /mgw_[A-Za-z0-9_-]{43}/.exec(made.stdout)?.[0];
      expect(token).toBeDefined();
      const res = await fetch(`http://127.0.0.1:${running.port}/devices`, {
        headers: { authorization: `Bearer ${token}` },
      });
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ data: [] });
    },
    TEST_MS,
  );

  it('refuses a second gateway in the same process too, and frees the directory when the first closes', async () => {
    const where = await location();
    const first = await startGateway({ location: where });
    const refused = await startGateway({ location: where }).then(
      () => expect.fail('a second gateway started'),
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(DataDirInUseError);
    expect((refused as DataDirInUseError).dataDir).toBe(where.dataDir);
    await first.close({ keepStore: true });
    const again = await startGateway({ location: where });
    expect((await again.request('GET', '/devices')).status).toBe(200);
    await again.close({ keepStore: true });
  });
});
