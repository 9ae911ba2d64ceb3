// Summary of a V8 CPU profile (`node --cpu-prof`, e.g. through BENCH_NODE_ARGS, bench/stores.ts): self time by
// function and by file, as shares of the sampled time (idle and GC apart), so that runs on a loaded machine compare.
//
//   node --import tsx bench/cpuprofile-summary.ts <file.cpuprofile> [top=25]
import { readFileSync } from 'node:fs';

interface Frame {
  readonly functionName: string;
  readonly url: string;
  readonly lineNumber: number;
}
interface ProfileNode {
  readonly id: number;
  readonly callFrame: Frame;
}
interface Profile {
  readonly nodes: readonly ProfileNode[];
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

const [file, topArg] = process.argv.slice(2);
if (file === undefined) {
  console.error('usage: bench/cpuprofile-summary.ts <file.cpuprofile> [top]');
  process.exit(2);
}
const top = Number(topArg ?? 25);
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const byId = new Map(profile.nodes.map((node) => [node.id, node]));

/** A file's short name: the part after node_modules/ or dist/, or the node: builtin. */
function where(url: string): string {
  if (url === '') return '(native)';
  const modules = url.lastIndexOf('node_modules/');
  if (modules >= 0) {
    const rest = url.slice(modules + 'node_modules/'.length).split('/');
    return rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]!;
  }
  const dist = url.lastIndexOf('/dist/');
  if (dist >= 0) return url.slice(dist + 1);
  return url.replace(/^file:\/\//, '');
}

const selfByFunction = new Map<string, number>();
const selfByFile = new Map<string, number>();
let busy = 0;
let idle = 0;
let gc = 0;
profile.samples.forEach((id, i) => {
  const delta = profile.timeDeltas[i] ?? 0;
  const frame = byId.get(id)!.callFrame;
  if (frame.functionName === '(idle)') return void (idle += delta);
  if (frame.functionName === '(garbage collector)') gc += delta;
  busy += delta;
  const fn = `${frame.functionName || '(anonymous)'} ${where(frame.url)}:${frame.lineNumber + 1}`;
  selfByFunction.set(fn, (selfByFunction.get(fn) ?? 0) + delta);
  // Gateway files by path; dependencies by package.
  const key = where(frame.url);
  selfByFile.set(key, (selfByFile.get(key) ?? 0) + delta);
});

const pct = (us: number) => `${((100 * us) / busy).toFixed(1).padStart(5)}%`;
const total = busy + idle;
console.log(
  `${file}: ${(total / 1e6).toFixed(1)} s sampled, busy ${((100 * busy) / total).toFixed(0)}%, ` +
    `GC ${pct(gc).trim()} of busy`,
);
for (const [title, map] of [
  ['self time by file/package (share of busy)', selfByFile],
  ['self time by function (share of busy)', selfByFunction],
] as const) {
  console.log(`\n${title}`);
  for (const [name, us] of [...map].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${pct(us)}  ${name}`);
}
