// The order the suite's files start in: the longest known first, so that no long file starts last and holds one
// worker while the others have nothing left (docs/testing.md, Where the suite's time goes: the order of the files).
//
// vitest hands every project's files to one queue of `maxWorkers` workers, in the order `sort` returns. Its own
// order takes a project's files by the durations of the last run in its cache (`node_modules/.vite/vitest`), and by
// file size when it has none, as in a clean clone or CI: the unit project's slow files then started last. Here the
// durations come from a committed table (test/helpers/durations.json, written by scripts/test-durations.js from a
// whole run), so a clean clone starts the same long files first.
//
// Owns: the order of the files. Must never: drop or add a file, or mix the files of two projects (a worker of a
// project without isolation runs the project's next file only when that file is first in the queue: mixing
// projects would start a fresh process, and pay the gateway's import, for each file).
import { readFileSync, statSync } from 'node:fs';
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

const TABLE = new URL('./durations.json', import.meta.url);

/** What the order is decided on: a file's project, its group, its key in the table and its size in bytes. */
export interface FileFacts {
  project: string;
  groupOrder: number;
  key: string;
  size: number;
}

/** Seconds a file took in a whole run, keyed `project:path` (path from the repository's root, with `/`). */
export type Durations = Readonly<Record<string, number>>;

/** The committed table, or none when it is missing or unreadable (the order is then by size alone). */
export function readDurations(path: URL = TABLE): Durations {
  try {
    const parsed = JSON.parse(readFileSync(path, 'utf8')) as { durations?: Record<string, number> };
    return parsed.durations ?? {};
  } catch {
    return {};
  }
}

/**
 * Compares two files: by group (vitest's `sequence.groupOrder`), then by project (in vitest's own order, by name),
 * then a file in the table before one that is not, known files the longest first, the others the largest first.
 */
export function compareFiles(a: FileFacts, b: FileFacts, durations: Durations): number {
  if (a.groupOrder !== b.groupOrder) return a.groupOrder - b.groupOrder;
  if (a.project !== b.project) return a.project < b.project ? -1 : 1;
  const da = durations[a.key];
  const db = durations[b.key];
  if (da !== undefined && db !== undefined && da !== db) return db - da;
  if (da !== undefined && db === undefined) return -1;
  if (da === undefined && db !== undefined) return 1;
  if (a.size !== b.size) return b.size - a.size;
  return a.key < b.key ? -1 : a.key > b.key ? 1 : 0;
}

function sizeOf(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

export default class DurationSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const durations = readDurations();
    const root = this.ctx.config.root;
    const facts = new Map<TestSpecification, FileFacts>();
    for (const spec of files) {
      facts.set(spec, {
        project: spec.project.name,
        groupOrder: spec.project.config.sequence.groupOrder,
        key: `${spec.project.name}:${relative(root, spec.moduleId).split('\\').join('/')}`,
        size: sizeOf(spec.moduleId),
      });
    }
    return [...files].sort((a, b) => compareFiles(facts.get(a)!, facts.get(b)!, durations));
  }
}
