// Counts the statements a gateway process sends to PostgreSQL, by statement text, for the benchmarks' rounds:
//
//   BENCH_STORE=postgres BENCH_NODE_ARGS="--import tsx --import ./bench/count-statements.ts" \
//   BENCH_STATEMENTS_OUT=/tmp/statements node --import tsx bench/e2e.ts 200 5000 50
//
// Each gateway writes <BENCH_STATEMENTS_OUT>.<pid>.json when it exits: every text (parameters left out, spaces
// squeezed) with how many times it ran, most first, and the wall time from sending it to its answer (`ms`, summed:
// the round trip and the server's work, locks and commits' WAL flushes included). Measurement only; the gateway
// never loads it.
import { writeFileSync } from 'node:fs';
import pg from 'pg';

type Query = (this: pg.Client, config: unknown, ...rest: unknown[]) => unknown;

const counts = new Map<string, { n: number; ms: number }>();
const client = pg.Client.prototype as unknown as { query: Query };
const original = client.query;
client.query = function counted(this: pg.Client, config: unknown, ...rest: unknown[]) {
  const text = typeof config === 'string' ? config : (config as { text?: unknown } | null)?.text;
  if (typeof text !== 'string') return original.call(this, config, ...rest);
  const key = text.replace(/\s+/g, ' ').trim();
  let entry = counts.get(key);
  if (entry === undefined) counts.set(key, (entry = { n: 0, ms: 0 }));
  entry.n++;
  const started = performance.now();
  const answer = original.call(this, config, ...rest);
  if (answer instanceof Promise) {
    const timed = entry;
    const stop = () => {
      timed.ms += performance.now() - started;
    };
    answer.then(stop, stop);
  }
  return answer;
};

const out = process.env.BENCH_STATEMENTS_OUT;
if (out !== undefined && out !== '') {
  process.on('exit', () => {
    const sorted = [...counts]
      .sort((a, b) => b[1].n - a[1].n)
      .map(([text, { n, ms }]) => ({ n, ms: Math.round(ms), text }));
    writeFileSync(`${out}.${process.pid}.json`, JSON.stringify(sorted, null, 1));
  });
}
