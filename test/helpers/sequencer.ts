// The order the suite's files start in: the longest known first, so that no long file starts last and holds one
// worker while the others have nothing left, but never more than two long files at once (docs/testing.md, Where the
// suite's time goes: the order of the files, and Long files side by side).
//
// The long files are long because they wait: for a stand-in's or a gateway process's answer, a receiver, a lease.
// Four of them side by side left the processors idle for half a minute (a whole run at 98 % busy, but 37-54 % while
// the slowest end-to-end files ran together). So the order comes from walking the queue as vitest will, worker
// by worker with the table's durations, and handing a free worker a long file only while fewer than two run.
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
 * The projects' order: the dashboard's first (its files are the longest, and all long), the project of the most short
 * files last (`sqlite`: its last files take a tenth of a second, so the run ends with every worker busy), and `unit`
 * before the two stores (its slowest files, last, held one worker for 13 s at the end of the run while the others
 * had nothing left). Projects not named here follow, by name.
 */
export const PROJECT_ORDER: readonly string[] = ['dashboard', 'unit', 'postgres', 'sqlite'];

function projectRank(project: string): number {
  const rank = PROJECT_ORDER.indexOf(project);
  return rank === -1 ? PROJECT_ORDER.length : rank;
}

/**
 * Compares two files: by group (vitest's `sequence.groupOrder`), then by project (`PROJECT_ORDER`),
 * then a file in the table before one that is not, known files the longest first, the others the largest first.
 */
export function compareFiles(a: FileFacts, b: FileFacts, durations: Durations): number {
  if (a.groupOrder !== b.groupOrder) return a.groupOrder - b.groupOrder;
  if (a.project !== b.project)
    return projectRank(a.project) - projectRank(b.project) || (a.project < b.project ? -1 : 1);
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

/** A file this long (seconds, in the table) counts as long: at most `LONG_AT_ONCE` of them start side by side. */
export const LONG_S = 8;
export const LONG_AT_ONCE = 2;
/** What a file missing from the table is taken to last, for the walk. */
const UNKNOWN_S = 1;

/**
 * `sorted` (in `compareFiles` order) walked as `workers` workers would take it, each project's files in turn: a
 * free worker takes the next long file while fewer than `LONG_AT_ONCE` long files are running, and the next short
 * one otherwise. When a project's short files run out, its remaining long files follow, the longest first; so do
 * they when the short files left could not keep the other workers busy until the longest of them ended.
 */
export function interleaveLong(sorted: readonly FileFacts[], durations: Durations, workers: number): FileFacts[] {
  const seconds = (f: FileFacts) => durations[f.key] ?? UNKNOWN_S;
  const free = Array.from({ length: Math.max(1, workers) }, () => 0);
  const longEnds: number[] = [];
  const order: FileFacts[] = [];
  for (let start = 0; start < sorted.length;) {
    let end = start;
    while (end < sorted.length && sameProject(sorted[end]!, sorted[start]!)) end++;
    const project = sorted.slice(start, end);
    const long = project.filter((f) => seconds(f) >= LONG_S);
    const short = project.filter((f) => seconds(f) < LONG_S);
    let shortLeft = short.reduce((sum, f) => sum + seconds(f), 0);
    while (long.length + short.length > 0) {
      const worker = free.indexOf(Math.min(...free));
      const now = free[worker]!;
      const running = longEnds.filter((at) => at > now).length;
      const wouldIdle = long.length > 0 && shortLeft / free.length < seconds(long[0]!);
      const next =
        (running < LONG_AT_ONCE || wouldIdle || short.length === 0) && long.length > 0 ? long.shift()! : short.shift()!;
      const took = seconds(next);
      if (took >= LONG_S) longEnds.push(now + took);
      else shortLeft -= took;
      free[worker] = now + took;
      order.push(next);
    }
    start = end;
  }
  return order;
}

function sameProject(a: FileFacts, b: FileFacts): boolean {
  return a.project === b.project && a.groupOrder === b.groupOrder;
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
    const specOf = new Map([...facts].map(([spec, fact]) => [fact, spec]));
    const sorted = [...facts.values()].sort((a, b) => compareFiles(a, b, durations));
    const workers = Number(this.ctx.config.maxWorkers) || 1;
    return interleaveLong(sorted, durations, workers).map((fact) => specOf.get(fact)!);
  }
}
