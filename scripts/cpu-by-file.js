// How much CPU each test file costs the machine, all processes counted (its in-process gateways, the gateway and
// stand-in processes it starts, PostgreSQL's backends, Chromium): it runs vitest one file at a time and reads the
// machine's busy ticks (/proc/stat) every 100 ms, then sums the ticks inside each file's window: from when vitest
// starts the file to when it ends (its imports, hooks and tests; scripts/file-windows-reporter.js records them). A
// file that waits has a low share of its window busy; one that computes a high one. Linux only. Nothing else should
// run meanwhile: every process on the machine is counted.
//
//   node scripts/cpu-by-file.js /tmp/cpu-by-file.txt [vitest arguments, e.g. --project sqlite test/messages]
//
// Writes a table (CPU seconds, wall seconds, busy share of one processor, project and file), the costliest first,
// to the file named. What vitest does between files is in no file's row; the run's total is the table's last line.
//
// Owns: nothing but its table. Never changes a test or the vitest configuration.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { clearInterval, setInterval } from 'node:timers';
import { fileURLToPath } from 'node:url';

const TICKS_PER_SECOND = 100;
const [output, ...vitestArguments] = process.argv.slice(2);
if (output === undefined) {
  console.error('usage: node scripts/cpu-by-file.js <table file> [vitest arguments]');
  process.exit(2);
}

/** The machine's busy ticks since boot, all processors: user, nice, system, irq, softirq and steal. */
function busyTicks() {
  const f = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  return f[0] + f[1] + f[2] + f[5] + f[6] + f[7];
}

const samples = [{ at: Date.now(), ticks: busyTicks() }];
const sampler = setInterval(() => samples.push({ at: Date.now(), ticks: busyTicks() }), 100);

/** Busy ticks between two moments, read off the samples (linear between two samples). */
function ticksAt(at) {
  let i = samples.findIndex((s) => s.at >= at);
  if (i === -1) return samples.at(-1).ticks;
  if (i === 0) return samples[0].ticks;
  const a = samples[i - 1];
  const b = samples[i];
  return a.ticks + ((b.ticks - a.ticks) * (at - a.at)) / Math.max(1, b.at - a.at);
}

const folder = mkdtempSync(join(tmpdir(), 'cpu-by-file-'));
const windows = join(folder, 'windows.jsonl');
const reporter = fileURLToPath(new globalThis.URL('./file-windows-reporter.js', import.meta.url));
const child = spawn('npx', ['vitest', 'run', '--reporter=default', `--reporter=${reporter}`, ...vitestArguments], {
  stdio: 'inherit',
  env: { ...process.env, VITEST_MAX_WORKERS: '1', FILE_WINDOWS_OUT: windows },
});
const started = Date.now();
const code = await new Promise((resolve) => child.on('exit', (c) => resolve(c ?? 1)));
clearInterval(sampler);
samples.push({ at: Date.now(), ticks: busyTicks() });

const files = readFileSync(windows, 'utf8')
  .split('\n')
  .filter((line) => line !== '')
  .map((line) => JSON.parse(line));
rmSync(folder, { recursive: true, force: true });
const rows = files
  .map((file) => {
    const cpu = (ticksAt(file.end) - ticksAt(file.start)) / TICKS_PER_SECOND;
    const wall = (file.end - file.start) / 1000;
    return { cpu, wall, file: `${file.project}  ${file.file.replace(`${process.cwd()}/`, '')}` };
  })
  .sort((a, b) => b.cpu - a.cpu);
const total = (samples.at(-1).ticks - samples[0].ticks) / TICKS_PER_SECOND;
const lines = rows.map(
  (r) =>
    `${r.cpu.toFixed(1).padStart(7)} ${r.wall.toFixed(1).padStart(7)} ${`${Math.round((100 * r.cpu) / r.wall)} %`.padStart(6)}  ${r.file}`,
);
const inFiles = rows.reduce((sum, r) => sum + r.cpu, 0);
lines.push(
  `${inFiles.toFixed(1).padStart(7)} in the files' windows; ${total.toFixed(1)} s of CPU in ${((Date.now() - started) / 1000).toFixed(0)} s of run`,
);
writeFileSync(output, `    CPU    wall   busy  project  file\n${lines.join('\n')}\n`);
process.exit(code);
