// Issue 10 item 5: a store that cannot be used at start-up stops the gateway
// with one clear line naming where and why (exit code 1), not a raw stack.
// SQLite: a data directory the gateway's user cannot write (as root, the
// gateway runs without the capability that lets root write anywhere).
// PostgreSQL: a DATABASE_URL where nothing listens.
import { spawn } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { chmod, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BUILD_TIMEOUT_MS, BUILT_MAIN, ensureBuilt } from '../helpers/built.js';
import { closedPort } from '../helpers/ports.js';
import { storeKind } from '../helpers/gateway.js';

// The built gateway (`npm start` runs dist/main.js), made current first.
beforeAll(() => ensureBuilt(), BUILD_TIMEOUT_MS);

interface Exit {
  code: number | null;
  stdout: string;
  stderr: string;
}

function runGateway(env: Record<string, string>, cwd: string, wrapper: string[] = []): Promise<Exit> {
  const [command, ...args] = [...wrapper, process.execPath, BUILT_MAIN];
  const child = spawn(command!, args, {
    cwd,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: cwd, HOST: '127.0.0.1', PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  // A wrapper that is not installed (setpriv) fails the test with its name, not an unhandled error.
  child.once('error', (error) => (stderr += `${error.message}\n`));
  const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
  return new Promise((resolve) => {
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/**
 * What the gateway must be started under so that a read-only directory is read-only to it: nothing, unless these
 * tests may write there anyway (root, through CAP_DAC_OVERRIDE). Then the gateway runs without that one capability
 * (setpriv, from util-linux), still as root: it keeps reading its code wherever the checkout lives (its owner, or
 * CAP_DAC_READ_SEARCH), which another OS user such as `nobody` could not when a parent folder is private.
 */
function withoutWriteOverride(directory: string): string[] {
  try {
    accessSync(directory, constants.W_OK);
  } catch {
    return [];
  }
  return ['setpriv', '--bounding-set=-dac_override', '--'];
}

describe.runIf(storeKind === 'sqlite')('a data directory that cannot be written', () => {
  let home: string;
  beforeAll(async () => {
    home = await mkdtemp(join(tmpdir(), 'gw-readonly-'));
  });
  afterAll(async () => {
    await chmod(join(home, 'data'), 0o755).catch(() => undefined);
    await rm(home, { recursive: true, force: true });
  });

  it('stops with one line naming the directory, and exit code 1', async () => {
    const data = join(home, 'data');
    await mkdir(data);
    await chmod(data, 0o555);
    // The working directory (for the tsx cache and HOME) is writable; only the data directory is not.
    const work = join(home, 'work');
    await mkdir(work);
    const exit = await runGateway({ GATEWAY_DATA_DIR: data, TMPDIR: work }, work, withoutWriteOverride(data));
    expect(exit.code).toBe(1);
    const lines = exit.stderr.trim().split('\n');
    expect(lines, exit.stderr).toEqual([
      `Store error: cannot open the SQLite store ${join(data, 'gateway.sqlite')} for writing: the directory ${data} is not writable (EACCES)`,
    ]);
    expect(exit.stdout + exit.stderr).not.toMatch(/\n\s+at /);
  });
});

describe.runIf(storeKind === 'postgres')('a PostgreSQL server that is not there', () => {
  let work: string;
  beforeAll(async () => {
    work = await mkdtemp(join(tmpdir(), 'gw-nopg-'));
  });
  afterAll(() => rm(work, { recursive: true, force: true }));

  it('stops with one line naming the setting and the reason, and exit code 1', async () => {
    const port = await closedPort();
    const exit = await runGateway(
      { GATEWAY_DATA_DIR: join(work, 'data'), DATABASE_URL: `postgres://postgres@127.0.0.1:${port}/postgres` },
      work,
    );
    expect(exit.code).toBe(1);
    expect(exit.stderr.trim().split('\n'), exit.stderr).toEqual([
      `Store error: the store (DATABASE_URL) cannot be used: connect ECONNREFUSED 127.0.0.1:${port} (ECONNREFUSED)`,
    ]);
    expect(exit.stdout + exit.stderr).not.toMatch(/\n\s+at /);
  });
});
