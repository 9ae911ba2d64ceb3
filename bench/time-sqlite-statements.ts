// Times the statements a gateway process runs on SQLite (better-sqlite3 runs them on the one thread, so their
// time is the gateway's CPU), by statement text, for the benchmarks' rounds:
//
//   BENCH_NODE_ARGS="--import tsx --import ./bench/time-sqlite-statements.ts" \
//   BENCH_STATEMENTS_OUT=/tmp/statements node --import tsx bench/destinations.ts 10 1150 20
//
// Each gateway writes <BENCH_STATEMENTS_OUT>.<pid>.json when it exits: every text (spaces squeezed) with how many
// times it ran, its rows and milliseconds in all, most time first. Measurement only; the gateway never loads it.
import { writeFileSync } from 'node:fs';
import Database from 'better-sqlite3';

interface Tally {
  n: number;
  rows: number;
  ms: number;
}
const tallies = new Map<string, Tally>();
const probe = new Database(':memory:');
const proto = Object.getPrototypeOf(probe.prepare('select 1')) as Record<string, unknown>;
probe.close();

for (const method of ['all', 'run', 'get', 'iterate'] as const) {
  const original = proto[method] as (...args: unknown[]) => unknown;
  proto[method] = function timed(this: { source: string }, ...args: unknown[]) {
    const started = process.hrtime.bigint();
    const result = original.apply(this, args);
    const ms = Number(process.hrtime.bigint() - started) / 1e6;
    const key = this.source.replace(/\s+/g, ' ').trim();
    const tally = tallies.get(key) ?? { n: 0, rows: 0, ms: 0 };
    tally.n += 1;
    tally.ms += ms;
    tally.rows += Array.isArray(result) ? result.length : 0;
    tallies.set(key, tally);
    return result;
  };
}

const out = process.env.BENCH_STATEMENTS_OUT;
if (out !== undefined && out !== '') {
  process.on('exit', () => {
    const sorted = [...tallies]
      .sort((a, b) => b[1].ms - a[1].ms)
      .map(([text, t]) => ({ ms: Math.round(t.ms), n: t.n, rows: t.rows, text }));
    writeFileSync(`${out}.${process.pid}.json`, JSON.stringify(sorted, null, 1));
  });
}
