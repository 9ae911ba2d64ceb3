// Benchmark: the cost of one authentication answered from the in-memory cache (AccountsService
// authenticateCached), the path every request with a recently seen token takes. It includes the
// revocation-counter bookkeeping (docs/security.md): the counter is read at most every 250 ms, so
// nearly every call here is a cache hit. Prints the median nanoseconds per call over 7 rounds.
//   node --import tsx bench/auth-cache.ts
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore } from '../src/store/store.js';
import { AccountsService } from '../src/accounts/service.js';
import { systemClock } from '../src/clock.js';
const dataDir = await mkdtemp(join(tmpdir(), 'micro-'));
const store = openStore({ databaseUrl: null, dataDir });
await store.migrate();
const accounts = new AccountsService(store, systemClock);
await accounts.bootstrap('mgw_micro_token_for_the_default_account_000');
const header = 'Bearer mgw_micro_token_for_the_default_account_000';
await accounts.authenticate(header);
const N = 2_000_000;
const results: number[] = [];
for (let round = 0; round < 7; round++) {
  let hits = 0;
  const start = process.hrtime.bigint();
  for (let i = 0; i < N; i++) {
    if (accounts.authenticateCached(header) !== undefined) hits++;
    else await accounts.authenticate(header);
  }
  const ns = Number(process.hrtime.bigint() - start) / N;
  results.push(ns);
  if (hits < N * 0.9) console.log(`only ${hits} of ${N} calls were cache hits`);
}
results.sort((a, b) => a - b);
console.log(JSON.stringify({ ns_per_call_median: results[3]?.toFixed(1), all: results.map((r) => r.toFixed(1)) }));
await store.close();
