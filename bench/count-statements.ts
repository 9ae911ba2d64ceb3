// Counts the statements a gateway process sends to PostgreSQL, by statement text, for the benchmarks' rounds:
//
//   BENCH_STORE=postgres BENCH_NODE_ARGS="--import tsx --import ./bench/count-statements.ts" \
//   BENCH_STATEMENTS_OUT=/tmp/statements node --import tsx bench/e2e.ts 200 5000 50
//
// Each gateway writes <BENCH_STATEMENTS_OUT>.<pid>.json when it exits: every text (parameters left out, spaces
// squeezed) with how many times it ran, most first. Measurement only; the gateway never loads it.
import { writeFileSync } from 'node:fs';
import pg from 'pg';

type Query = (this: pg.Client, config: unknown, ...rest: unknown[]) => unknown;

const counts = new Map<string, number>();
const client = pg.Client.prototype as unknown as { query: Query };
const original = client.query;
client.query = function counted(this: pg.Client, config: unknown, ...rest: unknown[]) {
  const text = typeof config === 'string' ? config : (config as { text?: unknown } | null)?.text;
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
