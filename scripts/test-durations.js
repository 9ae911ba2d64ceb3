// Writes test/helpers/durations.json, the table of how long each test file took per project, which the suite's
// sequencer (test/helpers/sequencer.ts) reads to start the longest files first. Run it after a whole `npm test`:
//
//   node scripts/test-durations.js [results.json]
//
// It reads vitest's results cache (by default node_modules/.vite/vitest/<hash>/results.json, which every run
// updates with each file's duration under `project:path`). Files the cache does not name keep their old entry;
// entries of files that no longer exist are dropped.
//
// Owns: the table's contents. Never runs tests, and writes nothing but the table.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const TABLE = join('test', 'helpers', 'durations.json');
// vitest keeps a root run's cache under the SHA-1 of the empty project name.
const CACHE = join('node_modules', '.vite', 'vitest', createHash('sha1').update('').digest('hex'), 'results.json');

const source = process.argv[2] ?? CACHE;
if (!existsSync(source)) {
  console.error(`no results cache at ${source}: run the whole suite first (npm test)`);
  process.exit(1);
}
const { results } = JSON.parse(readFileSync(source, 'utf8'));
const old = existsSync(TABLE) ? JSON.parse(readFileSync(TABLE, 'utf8')).durations : {};
const merged = { ...old };
for (const [key, { duration }] of results) merged[key] = Math.round(duration / 100) / 10;

const durations = {};
for (const key of Object.keys(merged).sort()) {
  const path = key.slice(key.indexOf(':') + 1);
  if (existsSync(path)) durations[key] = merged[key];
}
const table = {
  about: 'Seconds each test file took in a whole run, per project; written by scripts/test-durations.js.',
  durations,
};
writeFileSync(TABLE, `${JSON.stringify(table, null, 2)}\n`);
console.error(`${TABLE}: ${Object.keys(durations).length} files`);
