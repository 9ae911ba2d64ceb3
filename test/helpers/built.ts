// The build in dist/, made current first: the same check `npm start` makes (scripts/run-built.js), so a test of
// the built gateway never runs stale code. A no-op when the build is current (as after `npm ci` or `npm run build`).
//
// Owns: building at most once at a time for every test process of a run (a lock directory in dist/, so that a
// checkout whose node_modules/ is shared with others, as a worktree's symlink is, waits for no build but its own),
// and the paths of the built entry points. Must never: start a test on a build older than its sources, or hold the
// lock past a build (it is removed in `finally`, and one older than LOCK_STALE_MS is taken as left by a killed run).
import { spawnSync } from 'node:child_process';
import { mkdirSync, rmSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const DIST = fileURLToPath(new URL('../../dist', import.meta.url));
const LOCK = fileURLToPath(new URL('../../dist/.build-lock', import.meta.url));
/** A build takes a minute or two on a loaded machine; a lock this old was left by a killed test run. */
const LOCK_STALE_MS = 10 * 60_000;

/** The built gateway (`npm start` runs it) and the built operator's CLI (`npm run cli`). */
export const BUILT_MAIN = fileURLToPath(new URL('../../dist/main.js', import.meta.url));
export const BUILT_CLI = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));

let current = false;

function pause(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

function takeLock(): void {
  mkdirSync(DIST, { recursive: true });
  for (;;) {
    try {
      mkdirSync(LOCK);
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    try {
      if (Date.now() - statSync(LOCK).mtimeMs > LOCK_STALE_MS) rmSync(LOCK, { recursive: true, force: true });
    } catch {
      // Removed meanwhile by its holder: try again.
    }
    pause(200);
  }
}

/** Makes dist/ current (building when its sources are newer), once per test process; the projects' files share one build. */
export function ensureBuilt(): void {
  if (current) return;
  takeLock();
  try {
    const result = spawnSync(process.execPath, ['scripts/run-built.js', '--prepare'], { cwd: ROOT, encoding: 'utf8' });
    if (result.status !== 0) throw new Error(`the build failed:\n${result.stdout}${result.stderr}`);
  } finally {
    rmSync(LOCK, { recursive: true, force: true });
  }
  current = true;
}

/** How long a hook that makes the build current may take: a build from scratch on a loaded machine. */
export const BUILD_TIMEOUT_MS = 10 * 60_000;
