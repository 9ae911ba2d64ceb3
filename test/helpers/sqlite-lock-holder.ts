/**
 * A second process that writes to a gateway's SQLite file beside it, as the operator's CLI may: it takes the write
 * lock (`BEGIN IMMEDIATE`), holds it for `holdMs`, commits, rests `gapMs`, and again, until stopped. The gateway's
 * own writes wait on SQLite's busy timeout meanwhile: an honest slow store, with nothing switched on inside the
 * gateway. Not a test file itself.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

// Runs in the child: the hold is synchronous (the lock must stay taken), the rest is a timer, so SIGTERM is heard
// between rounds and answered with the number of rounds.
const SCRIPT = `
import Database from 'better-sqlite3';
const [file, hold, gap] = process.argv.slice(1);
const db = new Database(file);
db.pragma('busy_timeout = 10000');
const pause = new Int32Array(new SharedArrayBuffer(4));
let rounds = 0;
let timer;
function round() {
  db.exec('begin immediate');
  Atomics.wait(pause, 0, 0, Number(hold));
  db.exec('commit');
  rounds++;
  timer = setTimeout(round, Number(gap));
}
process.on('SIGTERM', () => {
  clearTimeout(timer);
  db.close();
  process.stdout.write(JSON.stringify({ rounds }) + '\\n');
  process.exit(0);
});
process.stdout.write('holding\\n');
round();
`;

export interface LockHolder {
  /** Stops it; answers how many times it took and released the lock. */
  stop(): Promise<{ rounds: number }>;
}

export async function startLockHolder(file: string, { holdMs, gapMs }: { holdMs: number; gapMs: number }) {
  const child = spawn(process.execPath, ['--input-type=module', '-e', SCRIPT, file, String(holdMs), String(gapMs)], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => (out += c));
  child.stderr.setEncoding('utf8').on('data', (c: string) => (err += c));
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', () => out.includes('holding\n') && resolve());
    void exited.then(() => reject(new Error(`the lock holder exited:\n${err}`)));
  });
  const holder: LockHolder = {
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
      const last = out.trim().split('\n').pop() ?? '';
      if (!last.startsWith('{')) throw new Error(`the lock holder ended without its count:\n${out}${err}`);
      return JSON.parse(last) as { rounds: number };
    },
  };
  return holder;
}
