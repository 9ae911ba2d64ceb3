// `npm start` and `npm run cli`: run a built entry point from dist/, building first only when the build is
// missing or older than its sources. `--prepare` (npm's install-time hook) builds the same way, and does
// nothing in a production install that has no dev dependencies.
//
// Owns: the "is the build current?" decision. The build is current when dist/.build-stamp (written by
// `postbuild`, scripts/build-stamp.js) is newer than every file it is made from: src/, web/ (the dashboard,
// when present), package.json, the TypeScript settings and scripts/bundle.js. A fresh clone has no dist/, so its
// first `npm start` builds; a production install (built, then `npm prune --omit=dev`) starts without compiling.
// A stale build with no TypeScript installed is an error with the way out, never a silent start of old code.
//
// Never runs anything but `npm run build` and the entry point, which runs in this same process (so signals
// reach the gateway directly).
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const STAMP = 'dist/.build-stamp';
const SOURCE_DIRS = ['src', 'web'];
const SOURCE_FILES = ['package.json', 'tsconfig.json', 'tsconfig.build.json', 'scripts/bundle.js'];
const SKIPPED_DIRS = new Set(['node_modules', 'dist']);

function newestIn(dir) {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (SKIPPED_DIRS.has(entry.name)) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestIn(path));
    else if (entry.isFile()) newest = Math.max(newest, statSync(path).mtimeMs);
  }
  return newest;
}

function newestSource() {
  let newest = 0;
  for (const dir of SOURCE_DIRS) if (existsSync(dir)) newest = Math.max(newest, newestIn(dir));
  for (const file of SOURCE_FILES) if (existsSync(file)) newest = Math.max(newest, statSync(file).mtimeMs);
  return newest;
}

/** Why the build must be made again, or null when it is current. */
function staleReason() {
  if (!existsSync(STAMP)) return 'no build yet (dist/.build-stamp is missing)';
  if (newestSource() > statSync(STAMP).mtimeMs) return 'the sources changed since the last build';
  return null;
}

function ensureBuilt() {
  const reason = staleReason();
  if (reason === null) return;
  if (!existsSync('node_modules/typescript')) {
    console.error(
      `Cannot start: ${reason}, and TypeScript (a dev dependency) is not installed to build it.\n` +
        'Build with the dev dependencies, then drop them: npm ci && npm run build && npm prune --omit=dev',
    );
    process.exit(1);
  }
  console.error(`Building first: ${reason}.`);
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const build = spawnSync(npm, ['run', 'build'], { stdio: 'inherit' });
  if (build.status !== 0) process.exit(build.status ?? 1);
}

const [entry, ...args] = process.argv.slice(2);
if (entry === '--prepare') {
  // npm's `prepare`, run by `npm install`/`npm ci`: a development install builds the server and the dashboard
  // there and then (docs/internals.md, The dashboard: built at install time), so the first `npm start` has nothing left to do. A
  // production install (`--omit=dev`) has no TypeScript and keeps the build it was given.
  if (!existsSync('node_modules/typescript') || !existsSync('src')) {
    console.error('Skipping the build at install: the dev dependencies are not installed (a production install).');
  } else {
    ensureBuilt();
  }
  process.exit(0);
}
if (entry === undefined) {
  console.error('usage: node scripts/run-built.js dist/<entry>.js [args...]');
  process.exit(2);
}
ensureBuilt();
const entryPath = resolve(entry);
// The entry sees the command line it would see if run as `node dist/<entry>.js args...`.
process.argv = [process.argv[0], entryPath, ...args];
await import(pathToFileURL(entryPath).href);
