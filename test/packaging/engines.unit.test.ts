// Issue 22 item 13: every package the lock file installs supports the Node.js that runs the tests (the project's
// machines and CI have Node.js 20), and package.json's `engines` says the truth: it allows only Node.js versions
// that every dependency allows, and starts at the lowest of them. `npm ci` only warns (EBADENGINE) where this
// test fails; CI (.ci/run) also refuses such an install.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import semver from 'semver';
import { describe, expect, it } from 'vitest';

const REPO = join(import.meta.dirname, '..', '..');

interface LockedPackage {
  version?: string;
  engines?: Record<string, string> | string[];
  os?: string[];
  cpu?: string[];
  optional?: boolean;
}

const lock = JSON.parse(readFileSync(join(REPO, 'package-lock.json'), 'utf8')) as {
  packages: Record<string, LockedPackage>;
};
const manifest = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { engines?: { node?: string } };

/** An `os`/`cpu` list allows `value` when it names it, or names only exclusions (`!win32`) none of which is it. */
function allows(list: string[] | undefined, value: string): boolean {
  if (list === undefined || list.length === 0) return true;
  if (list.includes(`!${value}`)) return false;
  return list.includes(value) || list.every((entry) => entry.startsWith('!'));
}

/**
 * The Node.js range of each package in the lock file that npm installs on this platform (root excluded). Optional
 * packages for other platforms are left out: npm never installs them here, and some of them name only the Node.js
 * versions their platform has builds for.
 */
function dependencyRanges(): { name: string; range: string }[] {
  return Object.entries(lock.packages)
    .filter(([path, entry]) => path !== '' && allows(entry.os, process.platform) && allows(entry.cpu, process.arch))
    .flatMap(([path, entry]) => {
      const range = Array.isArray(entry.engines) ? undefined : entry.engines?.node;
      const name = `${path.replace(/^.*node_modules\//, '')}@${entry.version ?? '?'}`;
      return range === undefined ? [] : [{ name, range }];
    });
}

describe('Node.js versions', () => {
  it('every package in package-lock.json supports the running Node.js', () => {
    const refused = dependencyRanges()
      .filter(({ range }) => !semver.satisfies(process.version, range))
      .map(({ name, range }) => `${name} wants node ${range}`);
    expect(refused, `Node.js ${process.version}`).toEqual([]);
  });

  it('package.json engines allows only versions every dependency supports, from the lowest of them', () => {
    const declared = manifest.engines?.node;
    expect(declared).toBeDefined();
    expect(semver.validRange(declared!)).not.toBeNull();
    expect(semver.satisfies(process.version, declared!), `${process.version} is outside ${declared}`).toBe(true);
    const ranges = dependencyRanges();
    expect(ranges.length).toBeGreaterThan(0);
    const wider = ranges.filter(({ range }) => !semver.subset(declared!, range));
    expect(
      wider.map(({ name, range }) => `${name} wants node ${range}`),
      `engines.node is ${declared}`,
    ).toEqual([]);
    // The lowest version all of them accept is one of the bounds they name (or just above an exclusive one).
    const bounds = ranges.flatMap(({ range }) =>
      new semver.Range(range).set.flat().flatMap((comparator) => {
        // `*` has no version.
        const version = (comparator.semver as { version?: string }).version;
        return version === undefined || version === '0.0.0' ? [] : [version, semver.inc(version, 'patch')!];
      }),
    );
    const lowest = semver.sort(
      bounds.filter((version) => ranges.every(({ range }) => semver.satisfies(version, range))),
    )[0];
    expect(semver.minVersion(declared!)?.version).toBe(lowest);
  });
});
