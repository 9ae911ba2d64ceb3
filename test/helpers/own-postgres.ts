// A PostgreSQL cluster of the test's own, for tests that stop, freeze and
// restart the database under a running gateway. It is made with the machine's
// PostgreSQL binaries (initdb in a temp dir, a free port on 127.0.0.1, the
// socket in the temp dir) and killed at the end; the machine's shared server
// is never touched. Run as root, the cluster runs as the `postgres` OS user
// (initdb refuses root), in a temp dir that user owns.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, openSync, closeSync, readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { takesConnections } from './pg-reachable.js';
import { portForOwnServer } from './ports.js';

export interface OwnPostgres {
  /** postgres://postgres@127.0.0.1:PORT/postgres */
  readonly url: string;
  /** Starts the server (again) and waits until it takes connections. */
  start(): Promise<void>;
  /** Fast shutdown (SIGINT, as `pg_ctl stop -m fast`): clients get 57P01; waits until it is gone. */
  stop(): Promise<void>;
  /** SIGSTOP to the server and every backend: connections stay open, the kernel still accepts new ones, nothing answers. */
  freeze(): void;
  thaw(): void;
  /** Kills the server whatever its state and removes its files. */
  destroy(): Promise<void>;
  /** The server's own log, for a failing test's message. */
  log(): string;
}

/** The newest PostgreSQL installed under /usr/lib/postgresql, or null (the test is then skipped). */
export function postgresBinaries(): string | null {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return null;
  const versions = readdirSync(root)
    .filter((v) => existsSync(join(root, v, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] === undefined ? null : join(root, versions[0], 'bin');
}

function osUser(): { uid: number; gid: number } | null {
  if (process.getuid?.() !== 0) return null;
  const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
  const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
  return { uid, gid };
}

/** Processes whose parent is `pid` (Linux /proc). */
function childrenOf(pid: number): number[] {
  const children: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // pid (comm) state ppid ...: comm may hold spaces and parentheses, so read after the last ')'.
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (parent === pid) children.push(Number(entry));
    } catch {
      // Gone meanwhile.
    }
  }
  return children;
}

export async function startOwnPostgres(): Promise<OwnPostgres> {
  const bin = postgresBinaries();
  if (bin === null) throw new Error('no PostgreSQL binaries under /usr/lib/postgresql');
  const user = osUser();
  const dir = await mkdtemp(join(tmpdir(), 'gw-own-pg-'));
  if (user !== null) chownSync(dir, user.uid, user.gid);
  const data = join(dir, 'data');
  const logFile = join(dir, 'server.log');
  const asUser = user === null ? {} : { uid: user.uid, gid: user.gid };
  execFileSync(join(bin, 'initdb'), ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync'], {
    ...asUser,
    stdio: 'ignore',
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: 'C', LC_ALL: 'C' },
  });
  const port = await portForOwnServer();
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  let server: ChildProcess | null = null;
  let exited: Promise<void> = Promise.resolve();

  const start = async () => {
    const out = openSync(logFile, 'a');
    if (user !== null) chownSync(logFile, user.uid, user.gid);
    const child = spawn(
      join(bin, 'postgres'),
      ['-D', data, '-p', String(port), '-k', dir, '-c', 'listen_addresses=127.0.0.1', '-c', 'fsync=off'],
      { ...asUser, stdio: ['ignore', out, out], env: { LANG: 'C', LC_ALL: 'C' } },
    );
    closeSync(out);
    server = child;
    exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    const deadline = Date.now() + 30_000;
    while (!(await takesConnections(url, 1000))) {
      if (child.exitCode !== null || Date.now() > deadline) {
        throw new Error(`own PostgreSQL did not start:\n${readFileSync(logFile, 'utf8')}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };

  // The postmaster, then its children (every backend starts a session of its own, so a process group is not enough).
  const signalGroup = (signal: NodeJS.Signals) => {
    if (server?.pid === undefined || server.exitCode !== null || server.signalCode !== null) return;
    for (const pid of [server.pid, ...childrenOf(server.pid)]) {
      try {
        process.kill(pid, signal);
      } catch {
        // Already gone.
      }
    }
  };

  await start();
  return {
    url,
    start,
    async stop() {
      signalGroup('SIGCONT');
      server?.kill('SIGINT');
      await exited;
      server = null;
    },
    freeze: () => signalGroup('SIGSTOP'),
    thaw: () => signalGroup('SIGCONT'),
    async destroy() {
      signalGroup('SIGCONT');
      signalGroup('SIGKILL');
      await exited;
      server = null;
      await rm(dir, { recursive: true, force: true });
    },
    log: () => (existsSync(logFile) ? readFileSync(logFile, 'utf8') : ''),
  };
}
