// Counts the statements a gateway process sends to PostgreSQL, by statement text, for the benchmarks' rounds:
//
//   BENCH_STORE=postgres BENCH_NODE_ARGS="--import ./bench/count-statements.mjs" \
//   BENCH_STATEMENTS_OUT=/tmp/statements node --import tsx bench/e2e.ts 200 5000 50
//
// Each gateway writes <BENCH_STATEMENTS_OUT>.<pid>.json when it exits: every text (parameters left out, spaces
// squeezed) with how many times it ran, most first. Measurement only; the gateway never loads it.
import { writeFileSync } from 'node:fs';
import pg from 'pg';

const counts = new Map();
const original = pg.Client.prototype.query;
pg.Client.prototype.query = function counted(config, ...rest) {
  const text = typeof config === 'string' ? config : config?.text;
  if (typeof text === 'string') {
    const key = text.replace(/\s+/g, ' ').trim();
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return original.call(this, config, ...rest);
};

const out = process.env.BENCH_STATEMENTS_OUT;
if (out !== undefined && out !== '') {
  process.on('exit', () => {
    const sorted = [...counts].sort((a, b) => b[1] - a[1]).map(([text, n]) => ({ n, text }));
    writeFileSync(`${out}.${process.pid}.json`, JSON.stringify(sorted, null, 1));
  });
}
