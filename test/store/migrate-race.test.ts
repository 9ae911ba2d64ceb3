// src/store/migrate.ts: migrations are safe from two processes at once (two
// servers, or a server and the CLI, starting together on a fresh store). Two
// child processes are released at the same moment on the same fresh store;
// both must succeed and each migration must run exactly once.
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/store.js';
import { BUILD_TIMEOUT_MS, ensureBuilt } from '../helpers/built.js';
import { newStoreLocation, noStoreAvailable, type StoreLocation } from '../helpers/gateway.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SCRIPT = fileURLToPath(new URL('./fixtures/migrate-once.js', import.meta.url));
const CHILD_TIMEOUT_MS = 15_000;

interface Outcome {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

interface Child {
  process: ChildProcess;
  ready: Promise<void>;
  done: Promise<Outcome>;
}

const running = new Set<ChildProcess>();

function start(location: StoreLocation): Child {
  const env: NodeJS.ProcessEnv = { ...process.env, GATEWAY_DATA_DIR: location.dataDir };
  delete env.DATABASE_URL;
  if (location.databaseUrl !== null) env.DATABASE_URL = location.databaseUrl;
  const child = spawn(process.execPath, [SCRIPT], { cwd: ROOT, env, stdio: 'pipe' });
  running.add(child);
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8');
  child.stderr.setEncoding('utf8');
  const ready = new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (chunk: string) => {
      stdout += chunk;
      if (stdout.startsWith('ready\n')) resolve();
    });
    child.once('close', () => reject(new Error(`child exited before it was ready: ${stderr}`)));
  });
  child.stderr.on('data', (chunk: string) => (stderr += chunk));
  const done = new Promise<Outcome>((resolve) => {
    child.once('close', (code, signal) => {
      running.delete(child);
      resolve({ code, signal, stdout, stderr });
    });
  });
  // A failure before release must not turn into an unhandled rejection.
  ready.catch(() => undefined);
  return { process: child, ready, done };
}

async function withTimeout<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} took longer than ${CHILD_TIMEOUT_MS} ms`)), CHILD_TIMEOUT_MS);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

function ranBy(outcome: Outcome): string[] {
  const line = outcome.stdout.split('\n').find((l) => l.startsWith('{'));
  if (line === undefined) throw new Error(`no result from child: ${outcome.stdout} ${outcome.stderr}`);
  return (JSON.parse(line) as { ran: string[] }).ran;
}

afterEach(async () => {
  // A failed test must not leave children behind.
  const left = [...running];
  for (const child of left) child.kill('SIGKILL');
  await Promise.all(left.map((child) => new Promise((resolve) => child.once('close', resolve))));
});

describe.skipIf(noStoreAvailable)('migrations from two processes at once', () => {
  // The children run the build's store (fixtures/migrate-once.js).
  beforeAll(() => ensureBuilt(), BUILD_TIMEOUT_MS);
  it.each([[1], [2], [3]])('race %i: both succeed and every migration runs exactly once', async () => {
    const location = await newStoreLocation({ migrated: false });
    try {
      const children = [start(location), start(location)];
      await withTimeout(Promise.all(children.map((c) => c.ready)), 'starting the children');
      // Release both at once: each then opens the store and migrates.
      for (const child of children) child.process.stdin?.end('go\n');
      const outcomes = await withTimeout(Promise.all(children.map((c) => c.done)), 'migrating');

      for (const outcome of outcomes) {
        expect(outcome.stderr).toBe('');
        expect(outcome).toMatchObject({ code: 0, signal: null });
      }
      const ran = outcomes.flatMap(ranBy);

      const store = openStore({ databaseUrl: location.databaseUrl, dataDir: location.dataDir });
      try {
        const recorded = await sql<{ name: string }>`select name from kysely_migration order by name`.execute(store.db);
        const applied = recorded.rows.map((r) => r.name);
        expect(applied).toContain('001-foundation');
        expect(new Set(applied).size).toBe(applied.length);
        // Together the two processes ran each migration exactly once.
        expect([...ran].sort()).toEqual(applied);
        // And the schema is there and usable.
        expect(await store.db.selectFrom('accounts').selectAll().execute()).toEqual([]);
        expect(await store.migrate()).toEqual([]);
      } finally {
        await store.close();
      }
    } finally {
      await location.drop();
    }
  });
});
