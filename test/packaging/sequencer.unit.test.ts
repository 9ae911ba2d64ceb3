// The suite's file order (test/helpers/sequencer.ts): each project's files together, in the sequencer's project
// order, the longest known first but never more than two long files side by side, files not in the table after them
// by size; and the committed table names, for the most part, files that exist, so a clean clone starts the
// known-slow files first.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  compareFiles,
  interleaveLong,
  LONG_AT_ONCE,
  LONG_S,
  PROJECT_ORDER,
  readDurations,
  type Durations,
  type FileFacts,
} from '../helpers/sequencer.js';

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
    expect(order(files, durations)).toEqual(['unit:a.ts', 'unit:b.ts', 'postgres:e.ts', 'sqlite:d.ts', 'sqlite:c.ts']);
  });

  it('starts the dashboard first and ends with the project of the most short files, others after by name', () => {
    expect(PROJECT_ORDER).toEqual(['dashboard', 'unit', 'postgres', 'sqlite']);
    const files = [file('sqlite', 's.ts'), file('zeta', 'z.ts'), file('alpha', 'a.ts'), file('dashboard', 'd.ts')];
    expect(order(files, {})).toEqual(['dashboard:d.ts', 'sqlite:s.ts', 'alpha:a.ts', 'zeta:z.ts']);
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

  it('starts no more than LONG_AT_ONCE long files side by side while short ones can fill the other workers', () => {
    // Four workers; five long files of 20 s and 120 short files of 1 s in one project. Longest first would start
    // four long files together.
    const durations: Record<string, number> = {};
    const files: FileFacts[] = [];
    for (let i = 0; i < 5; i++) {
      durations[`sqlite:long${i}.ts`] = 20;
      files.push(file('sqlite', `long${i}.ts`));
    }
    for (let i = 0; i < 120; i++) {
      durations[`sqlite:short${String(i).padStart(3, '0')}.ts`] = 1;
      files.push(file('sqlite', `short${String(i).padStart(3, '0')}.ts`));
    }
    const sorted = [...files].sort((a, b) => compareFiles(a, b, durations));
    const walked = interleaveLong(sorted, durations, 4);
    expect(walked).toHaveLength(files.length);
    expect(new Set(walked.map((f) => f.key))).toEqual(new Set(files.map((f) => f.key)));
    // Replay the walk: when each long file runs, and when the last file ends.
    const free = [0, 0, 0, 0];
    const longRuns: Array<[number, number]> = [];
    for (const f of walked) {
      const worker = free.indexOf(Math.min(...free));
      const start = free[worker]!;
      free[worker] = start + durations[f.key]!;
      if (durations[f.key]! >= LONG_S) longRuns.push([start, free[worker]!]);
    }
    // While the short files left could keep the other workers busy, two long files run, not four.
    expect(longRuns.filter(([start]) => start < 20)).toHaveLength(LONG_AT_ONCE);
    expect(longRuns.filter(([start]) => start < 20).every(([start]) => start === 0)).toBe(true);
    expect(walked.slice(0, 4).map((f) => f.key)).toEqual([
      'sqlite:long0.ts',
      'sqlite:long1.ts',
      'sqlite:short000.ts',
      'sqlite:short001.ts',
    ]);
    // No long file is left for the end: 220 s of work on four workers cannot end before 55 s; the walk ends by 60 s
    // (the last long file is released when the short files left, spread over the workers, would end before it).
    expect(Math.max(...free)).toBeLessThanOrEqual(60);
  });

  it('keeps each project together and starts the long files of a project of only long files at once', () => {
    const durations = { 'dashboard:a.ts': 50, 'dashboard:b.ts': 45, 'dashboard:c.ts': 20, 'unit:u.ts': 1 };
    const files = [
      file('unit', 'u.ts'),
      file('dashboard', 'c.ts'),
      file('dashboard', 'a.ts'),
      file('dashboard', 'b.ts'),
    ];
    const sorted = [...files].sort((a, b) => compareFiles(a, b, durations));
    expect(interleaveLong(sorted, durations, 4).map((f) => f.key)).toEqual([
      'dashboard:a.ts',
      'dashboard:b.ts',
      'dashboard:c.ts',
      'unit:u.ts',
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
