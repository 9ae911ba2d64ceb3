// The suite's file order (test/helpers/sequencer.ts): each project's files together, in vitest's project order,
// the longest known first, files not in the table after them by size; and the committed table names, for the most
// part, files that exist, so a clean clone starts the known-slow files first.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { compareFiles, readDurations, type Durations, type FileFacts } from '../helpers/sequencer.js';

const REPO = join(import.meta.dirname, '..', '..');

function file(project: string, path: string, size = 100, groupOrder = 0): FileFacts {
  return { project, groupOrder, key: `${project}:${path}`, size };
}

function order(files: FileFacts[], durations: Durations): string[] {
  return [...files].sort((a, b) => compareFiles(a, b, durations)).map((f) => f.key);
}

describe('the order the suite starts its files in', () => {
  it('keeps each project together, in project order, the longest known file first', () => {
    const durations = { 'unit:a.ts': 50, 'unit:b.ts': 1, 'sqlite:c.ts': 5, 'sqlite:d.ts': 30, 'postgres:e.ts': 2 };
    const files = [
      file('unit', 'b.ts'),
      file('sqlite', 'c.ts'),
      file('unit', 'a.ts'),
      file('postgres', 'e.ts'),
      file('sqlite', 'd.ts'),
    ];
    expect(order(files, durations)).toEqual(['postgres:e.ts', 'sqlite:d.ts', 'sqlite:c.ts', 'unit:a.ts', 'unit:b.ts']);
  });

  it('starts files missing from the table after the known ones, the largest first', () => {
    const durations = { 'unit:known.ts': 0.1 };
    const files = [file('unit', 'small.ts', 10), file('unit', 'big.ts', 5000), file('unit', 'known.ts', 1)];
    expect(order(files, durations)).toEqual(['unit:known.ts', 'unit:big.ts', 'unit:small.ts']);
  });

  it('puts a lower sequence.groupOrder first, whatever the durations', () => {
    const files = [file('a', 'slow.ts', 1, 1), file('b', 'quick.ts', 1, 0)];
    expect(order(files, { 'a:slow.ts': 100, 'b:quick.ts': 1 })).toEqual(['b:quick.ts', 'a:slow.ts']);
  });

  it('orders by size alone without a table', () => {
    const files = [file('unit', 'x.ts', 1), file('unit', 'y.ts', 2)];
    expect(order(files, readDurations(new URL('file:///nonexistent/durations.json')))).toEqual([
      'unit:y.ts',
      'unit:x.ts',
    ]);
  });

  it('has a committed table, of the projects of vitest.config.ts, that names existing files', () => {
    // An entry of a file since renamed or removed is never matched (and dropped at the next refresh), so only
    // most entries need to name a file that exists; a table that named none would order nothing.
    const durations = readDurations();
    const keys = Object.keys(durations);
    const existing = keys.filter((key) => existsSync(join(REPO, key.slice(key.indexOf(':') + 1))));
    expect(existing.length).toBeGreaterThan(100);
    expect(existing.length / keys.length).toBeGreaterThan(0.8);
    for (const key of keys) {
      expect(['unit', 'sqlite', 'postgres', 'dashboard'], key).toContain(key.slice(0, key.indexOf(':')));
      expect(durations[key], key).toBeGreaterThanOrEqual(0);
    }
  });
});
