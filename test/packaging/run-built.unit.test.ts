// `npm start` runs the built output and compiles only when the build is missing or stale (issue 15), and a
// production install (`npm ci --omit=dev`) runs no script that needs a dev dependency.
//
// The start script runs in a scratch project whose "build" is a small script that counts its runs, so each
// case shows whether a build happened, whether the entry point ran, and with which command line.
import { spawnSync } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

const REPO = join(import.meta.dirname, '..', '..');
const RUN_BUILT = join(REPO, 'scripts', 'run-built.js');

// The scratch project's build: counts its runs and writes an entry point that prints its command line.
const BUILD_SCRIPT = `
import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
appendFileSync('builds.log', 'build\\n');
if (process.env.FAIL_BUILD === '1') process.exit(3);
mkdirSync('dist', { recursive: true });
writeFileSync('dist/main.js', "console.log('entry ' + JSON.stringify(process.argv.slice(1)));\\n");
`;

let project: string;

function run(env: Record<string, string> = {}, args: string[] = []) {
  const result = spawnSync(process.execPath, [join('scripts', 'run-built.js'), 'dist/main.js', ...args], {
    cwd: project,
    env: { ...process.env, ...env },
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

function builds(): number {
  if (!existsSync(join(project, 'builds.log'))) return 0;
  return readFileSync(join(project, 'builds.log'), 'utf8').split('\n').filter(Boolean).length;
}

/** Sets a file's modification time to `seconds` after a fixed past instant. */
function setTime(path: string, seconds: number): void {
  const at = new Date(Date.UTC(2026, 0, 1) + seconds * 1000);
  utimesSync(join(project, path), at, at);
}

beforeEach(() => {
  project = mkdtempSync(join(tmpdir(), 'run-built-'));
  mkdirSync(join(project, 'scripts'));
  mkdirSync(join(project, 'src'));
  mkdirSync(join(project, 'node_modules', 'typescript'), { recursive: true });
  copyFileSync(RUN_BUILT, join(project, 'scripts', 'run-built.js'));
  copyFileSync(join(REPO, 'scripts', 'build-stamp.js'), join(project, 'scripts', 'build-stamp.js'));
  writeFileSync(join(project, 'build.js'), BUILD_SCRIPT);
  writeFileSync(
    join(project, 'package.json'),
    JSON.stringify({
      name: 'scratch',
      type: 'module',
      scripts: { build: 'node build.js', postbuild: 'node scripts/build-stamp.js' },
    }),
  );
  writeFileSync(join(project, 'src', 'main.ts'), 'export {};\n');
  setTime('package.json', 0);
  setTime('src/main.ts', 0);
});

afterEach(() => {
  rmSync(project, { recursive: true, force: true });
});

describe('npm start (scripts/run-built.js)', () => {
  it('builds a fresh clone once, then starts without building while the build is current', () => {
    const first = run();
    expect(first.stderr).toContain('Building first: no build yet');
    expect(first.status).toBe(0);
    expect(first.stdout).toContain('entry [');
    expect(builds()).toBe(1);

    const second = run();
    expect(second.status).toBe(0);
    expect(second.stdout).toContain('entry [');
    expect(second.stderr).not.toContain('Building first');
    expect(builds()).toBe(1);
  });

  it('builds again when a source is newer than the build stamp, in src/ or web/', () => {
    expect(run().status).toBe(0);
    setTime('dist/.build-stamp', 100);

    setTime('src/main.ts', 200);
    const afterSourceEdit = run();
    expect(afterSourceEdit.stderr).toContain('the sources changed since the last build');
    expect(builds()).toBe(2);

    mkdirSync(join(project, 'web', 'pages'), { recursive: true });
    writeFileSync(join(project, 'web', 'pages', 'index.ts'), 'export {};\n');
    setTime('dist/.build-stamp', 300);
    setTime('web/pages/index.ts', 400);
    expect(run().status).toBe(0);
    expect(builds()).toBe(3);

    // Files under a node_modules folder are not sources.
    mkdirSync(join(project, 'web', 'node_modules', 'x'), { recursive: true });
    writeFileSync(join(project, 'web', 'node_modules', 'x', 'index.js'), '');
    setTime('dist/.build-stamp', 500);
    setTime('web/node_modules/x/index.js', 600);
    expect(run().status).toBe(0);
    expect(builds()).toBe(3);
  });

  it('gives the entry point the command line it would have if run directly', () => {
    const result = run({}, ['accounts', 'list', '--json']);
    expect(result.status).toBe(0);
    const line = result.stdout.split('\n').find((l) => l.startsWith('entry ')) ?? '';
    const argv = JSON.parse(line.slice('entry '.length)) as string[];
    expect(argv).toEqual([join(project, 'dist', 'main.js'), 'accounts', 'list', '--json']);
  });

  it('refuses to start a stale build when TypeScript is not installed, and says how to build', () => {
    rmSync(join(project, 'node_modules'), { recursive: true });
    const result = run();
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('Cannot start: no build yet (dist/.build-stamp is missing)');
    expect(result.stderr).toContain('npm ci && npm run build && npm prune --omit=dev');
    expect(result.stdout).not.toContain('entry');
    expect(builds()).toBe(0);
  });

  it('starts a current build without TypeScript installed (a production install)', () => {
    expect(run().status).toBe(0);
    rmSync(join(project, 'node_modules'), { recursive: true });
    const result = run();
    expect(result.status).toBe(0);
    expect(result.stdout).toContain('entry [');
    expect(builds()).toBe(1);
  });

  it('does not start when the build fails', () => {
    const result = run({ FAIL_BUILD: '1' });
    expect(result.status).not.toBe(0);
    expect(result.stdout).not.toContain('entry');
    expect(existsSync(join(project, 'dist', '.build-stamp'))).toBe(false);
  });
});

describe('the install-time build (--prepare)', () => {
  const prepare = () =>
    spawnSync(process.execPath, [join('scripts', 'run-built.js'), '--prepare'], { cwd: project, encoding: 'utf8' });

  it('builds a development install once, and not again while current', () => {
    expect(prepare().status).toBe(0);
    expect(builds()).toBe(1);
    expect(prepare().status).toBe(0);
    expect(builds()).toBe(1);
    expect(run().stdout).toContain('entry');
    expect(builds()).toBe(1);
  });

  it('does nothing, successfully, in a production install without TypeScript', () => {
    rmSync(join(project, 'node_modules', 'typescript'), { recursive: true });
    const result = prepare();
    expect(result.status).toBe(0);
    expect(result.stderr).toContain('production install');
    expect(builds()).toBe(0);
  });

  it('fails the install when the build fails', () => {
    const result = spawnSync(process.execPath, [join('scripts', 'run-built.js'), '--prepare'], {
      cwd: project,
      env: { ...process.env, FAIL_BUILD: '1' },
      encoding: 'utf8',
    });
    expect(result.status).not.toBe(0);
  });
});

describe('package.json', () => {
  const pkg = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { scripts: Record<string, string> };

  it('builds at install only through the guarded prepare hook, never through other install hooks', () => {
    for (const hook of ['preinstall', 'install', 'postinstall']) {
      expect(pkg.scripts[hook], hook).toBeUndefined();
    }
    // Without scripts/ (a container's dependency layer) the hook does nothing.
    const empty = mkdtempSync(join(tmpdir(), 'prepare-'));
    try {
      const result = spawnSync('sh', ['-c', pkg.scripts.prepare!], { cwd: empty, encoding: 'utf8' });
      expect(result.status).toBe(0);
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });

  it('starts and runs the command line through the build check, and stamps every build', () => {
    expect(pkg.scripts.start).toBe('node scripts/run-built.js dist/main.js');
    expect(pkg.scripts.cli).toBe('node scripts/run-built.js dist/cli/main.js');
    expect(pkg.scripts.postbuild).toBe('node scripts/build-stamp.js');
  });
});
