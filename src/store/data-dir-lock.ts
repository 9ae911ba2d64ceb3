/**
 * One gateway per SQLite data directory: the running gateway holds an
 * operating-system lock on `gateway.lock` in its data directory for as long as
 * it lives; a second gateway on the same directory is refused at start-up.
 *
 * Why an OS lock and not a file that says "taken": the lock is the kernel's
 * (SQLite's own POSIX advisory lock, taken by a write transaction that is never
 * committed on an otherwise empty database file), so it ends with the process
 * however the process ends, SIGKILL and power loss included. Nothing is stale
 * afterwards and there is no timeout to wait out. The lock is on a file of its
 * own, not on `gateway.sqlite`, so the operator's CLI (accounts, tokens,
 * suspensions, migrate) keeps working beside the running gateway with its
 * short transactions.
 *
 * Owns: taking and releasing that lock, and the refusal message. Must never:
 * wait for the lock (a second gateway is an operator's mistake, said at once),
 * or be taken by the CLI.
 */
import Database from 'better-sqlite3';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { StoreOpenError } from './faults.js';

export const LOCK_FILE = 'gateway.lock';
/** The holder's process id, for the refusal message only; the lock itself never depends on it. */
export const PID_FILE = 'gateway.pid';

export class DataDirInUseError extends StoreOpenError {
  constructor(
    readonly dataDir: string,
    readonly holderPid: number | null,
    cause: unknown,
  ) {
    super(
      `another gateway process${holderPid === null ? '' : ` (pid ${holderPid})`} is already using the data ` +
        `directory ${dataDir}. One SQLite data directory serves one gateway: stop the other one first, or give ` +
        `this one its own GATEWAY_DATA_DIR (several gateways on one store need PostgreSQL, DATABASE_URL).`,
      cause,
    );
    this.name = 'DataDirInUseError';
  }
}

export interface DataDirLock {
  release(): void;
}

function isBusy(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED';
}

function readHolder(dataDir: string): number | null {
  try {
    const pid = Number(readFileSync(join(dataDir, PID_FILE), 'utf8').trim());
    return Number.isSafeInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

/**
 * Takes the data directory's lock or throws DataDirInUseError at once. Other failures (a directory that cannot
 * be written) are thrown as they are; the caller reports them in its own words.
 */
export function lockDataDir(dataDir: string): DataDirLock {
  const lock = new Database(join(dataDir, LOCK_FILE));
  try {
    lock.pragma('busy_timeout = 0');
    // An exclusive transaction on a database nothing ever writes to: no journal, no pages, just the lock.
    lock.exec('begin exclusive');
  } catch (error) {
    lock.close();
    if (isBusy(error)) throw new DataDirInUseError(dataDir, readHolder(dataDir), error);
    throw error;
  }
  const pidFile = join(dataDir, PID_FILE);
  try {
    writeFileSync(pidFile, `${process.pid}\n`);
  } catch {
    // Only the message of a refused second gateway would miss it.
  }
  let released = false;
  return {
    release() {
      if (released) return;
      released = true;
      // Ours only while we hold the lock: remove it before letting go, so no newer holder's file is removed.
      if (readHolder(dataDir) === process.pid) rmSync(pidFile, { force: true });
      lock.close();
    },
  };
}
