// Sums the CPU (user + system) every process on the machine used while it ran, by kind of process: vitest's
// workers and its own process, the gateway and CLI processes the tests start, the stand-ins, Chromium's processes
// by type, PostgreSQL's backends. `/usr/bin/time npx vitest run` gives one sum for vitest and the processes it
// waits for, and nothing of the PostgreSQL server's (docs/testing.md, One browser for the dashboard project). Linux
// only (reads /proc).
//
//   node scripts/cpu-by-process.js /tmp/cpu.txt & P=$!; npx vitest run; kill $P
//
// It reads /proc every 250 ms and counts, for each process, what it used between the first and the last time it
// was seen: a process that lives less than 250 ms is missed, and one seen first late loses what it used before.
// On SIGTERM or SIGINT it writes the table (seconds, processes, kind) to the file named, or prints it, and after it
// how busy the machine's processors were in each 10 s of the run (from /proc/stat: the share not idle or waiting on
// the disk), which shows when the run waited instead of computing (docs/testing.md, Long files side by side).
//
// Owns: nothing but its table. Never signals or changes another process.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { clearInterval, setInterval } from 'node:timers';

const TICKS_PER_SECOND = 100;
/** Per process (pid and start time), its kind and its CPU seconds when first and last seen. */
const seen = new Map();

function kindOf(command, name) {
  if (command.includes('vitest/dist/workers/')) return 'vitest worker';
  if (command.includes('vitest')) return 'vitest';
  if (command.includes('gateway-standin') || command.includes('standin/main')) return 'stand-in';
  if (command.includes('dist/main.js')) return 'gateway process';
  if (command.includes('dist/cli/')) return 'CLI process';
  if (name.startsWith('chrom') || command.includes('chromium')) {
    const type = /--type=([a-z-]+)/.exec(command)?.[1] ?? 'browser';
    return `chromium ${type}`;
  }
  if (name === 'postgres' || command.startsWith('postgres')) return 'postgres';
  if (name === 'node') return `node ${command.slice(0, 60)}`;
  return name;
}

function poll() {
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const cpu = (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
      const key = `${pid}:${fields[19]}`;
      const known = seen.get(key);
      if (known !== undefined) {
        known.last = cpu;
        continue;
      }
      const command = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      seen.set(key, { kind: kindOf(command, name), first: cpu, last: cpu });
    } catch {
      // The process ended between the listing and the read.
    }
  }
}

/** The machine's busy and idle ticks (all processors) since boot: user, nice, system, irq, softirq, steal / idle, iowait. */
function machineTicks() {
  const f = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  return { busy: f[0] + f[1] + f[2] + f[5] + f[6] + f[7], idle: f[3] + f[4] };
}

const BUSY_EVERY_MS = 10_000;
const busyShares = [];
let lastTicks = machineTicks();

function sampleBusy() {
  const now = machineTicks();
  const busy = now.busy - lastTicks.busy;
  const idle = now.idle - lastTicks.idle;
  busyShares.push(busy + idle === 0 ? 0 : busy / (busy + idle));
  lastTicks = now;
}

const timer = setInterval(poll, 250);
const busyTimer = setInterval(sampleBusy, BUSY_EVERY_MS);
poll();

function report() {
  clearInterval(timer);
  clearInterval(busyTimer);
  poll();
  const sums = new Map();
  for (const { kind, first, last } of seen.values()) {
    const sum = sums.get(kind) ?? { seconds: 0, processes: 0 };
    sum.seconds += last - first;
    sum.processes += 1;
    sums.set(kind, sum);
  }
  const lines = [...sums]
    .filter(([, sum]) => sum.seconds >= 0.5)
    .sort((a, b) => b[1].seconds - a[1].seconds)
    .map(([kind, sum]) => `${sum.seconds.toFixed(1).padStart(8)} ${String(sum.processes).padStart(6)}  ${kind}`);
  const busy = busyShares.map((share, i) => `${String(i * 10).padStart(5)} s ${Math.round(share * 100)} %`);
  const table = `${lines.join('\n')}\n\nprocessors busy, per ${BUSY_EVERY_MS / 1000} s:\n${busy.join('\n')}\n`;
  if (process.argv[2] === undefined) process.stdout.write(table);
  else writeFileSync(process.argv[2], table);
  process.exit(0);
}

process.on('SIGTERM', report);
process.on('SIGINT', report);
