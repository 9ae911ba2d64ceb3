// The container path as documented is the one CI runs (issue 22): scripts/container-smoke.sh builds and runs the
// image with the commands of docs/operations.md and nothing a reader would not type (no per-container limits or
// runtime flags, which engines refuse on other hosts: "error setting rlimit type 7"), and the Dockerfile's build
// stage gets its dev tools whatever the environment says (NODE_ENV=production made it fail with "tsc: not found").
// No container engine runs in the unit tests; scripts/container-smoke.sh itself runs in CI after the suite.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const REPO = join(import.meta.dirname, '..', '..');
const read = (path: string) => readFileSync(join(REPO, path), 'utf8');

const DOCUMENTED_BUILD = 'docker build -t messaging-gateway .';
const DOCUMENTED_RUN = 'docker run -d --name gateway -p 127.0.0.1:3000:3000 -v gateway-data:/data messaging-gateway';

/** Every `podman build` / `podman run` of the script, its continuation lines joined, comments left out. */
function podmanCommands(script: string, verb: 'build' | 'run'): string[] {
  const joined = script
    .split('\n')
    .filter((line) => !line.trimStart().startsWith('#'))
    .join('\n')
    .replace(/\\\n\s*/g, ' ');
  return joined
    .split('\n')
    .filter((line) => new RegExp(`(^|[\\s!])podman(_quiet)? ${verb} `).test(line))
    .map((line) => line.trim());
}

/** The options a command line passes (`--name`, `-p`, `--pull=never` as `--pull`). */
function options(command: string): string[] {
  return [...command.matchAll(/(?:^|\s)(--?[a-z][a-z-]*)/g)].map((m) => m[1]!).filter((o) => o !== '-c');
}

/** Shell command lines of the Markdown documentation (inside fenced blocks) that call docker or podman. */
function documentedCommands(): string[] {
  const pages = ['README.md', 'docs/operations.md'].map(read);
  const lines: string[] = [];
  for (const page of pages) {
    let fenced = false;
    for (const line of page.split('\n')) {
      if (line.startsWith('```')) fenced = !fenced;
      else if (fenced && /^\s*(docker|podman)\s/.test(line)) lines.push(line.trim());
    }
  }
  return lines;
}

describe('the container path', () => {
  const smoke = read('scripts/container-smoke.sh');

  it('is documented with plain build and run commands', () => {
    const commands = documentedCommands();
    expect(commands).toContain(DOCUMENTED_BUILD);
    expect(commands.some((line) => line.startsWith(DOCUMENTED_RUN))).toBe(true);
    for (const line of commands) {
      expect(line, line).not.toMatch(/--ulimit|--runtime|--privileged|--security-opt/);
    }
  });

  it('is built by the smoke test as documented, with podman, offline', () => {
    const builds = podmanCommands(smoke, 'build');
    expect(builds).toHaveLength(1);
    // -t and the build context of the docs; podman's --format docker keeps the HEALTHCHECK (documented),
    // --pull=never keeps it offline, and the array carries only the documented EXTRA_CA_CERTS build argument.
    expect(builds[0]).toMatch(/ -t "\$IMAGE" \. /);
    expect(new Set(options(builds[0]!))).toEqual(new Set(['--pull', '--format', '-t']));
    expect(smoke).toMatch(/build_args\+=\(--build-arg "EXTRA_CA_CERTS=\$extra_ca"\)/);
  });

  it('is run by the smoke test as documented, with only a test run’s own names, port and settings', () => {
    const runs = podmanCommands(smoke, 'run');
    expect(runs.length).toBeGreaterThanOrEqual(2);
    const allowed = new Set([
      '-d',
      '--rm',
      '--name',
      '-p',
      '-v',
      '-e',
      '--health-interval',
      '--no-healthcheck',
      '--entrypoint',
    ]);
    for (const run of runs) {
      expect(
        options(run).filter((o) => !allowed.has(o)),
        run,
      ).toEqual([]);
    }
    const gateway = runs.find((run) => run.includes('run -d'));
    expect(gateway).toBeDefined();
    expect(options(gateway!)).toEqual(expect.arrayContaining(['-d', '--name', '-p', '-v']));
    expect(gateway).toContain(':/data');
    expect(smoke).not.toMatch(/--ulimit|--runtime/);
  });

  it('builds with the dev dependencies whatever NODE_ENV says, and runs in production mode', () => {
    // The build stage is everything before the runtime stage's `FROM ${NODE_IMAGE}` (the build's has `AS build`).
    const instructions = read('Dockerfile')
      .split('\n')
      .filter((line) => !line.startsWith('#'))
      .join('\n');
    const stages = instructions.split(/^FROM \$\{NODE_IMAGE\}\s*$/m);
    expect(stages).toHaveLength(2);
    const [buildStage, runtime] = stages as [string, string];
    expect(buildStage).toMatch(/^FROM \$\{NODE_IMAGE\} AS build$/m);
    expect(buildStage).toMatch(/npm ci --include=dev\b/);
    expect(buildStage).not.toMatch(/NODE_ENV=production/);
    expect(buildStage).toMatch(/npm run build/);
    expect(runtime).toMatch(/NODE_ENV=production/);
  });
});
