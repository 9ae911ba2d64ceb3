// Bootstrap from several nodes at once (issue 22, item 1): migrations, the
// `default` account and its token, run by three nodes started together on an
// empty store. One wins, the others see its result, none fails.
//
// In-process: each "node" is its own store (its own connection pool), all
// released together, 10 rounds on a fresh, migrated store emptied before each round. SQLite has one connection per
// store and a process-wide blocking busy wait, so several stores in one process
// cannot race it (its bootstrap is one BEGIN IMMEDIATE transaction, which
// excludes every other writer; one gateway per data directory).
//
// As an operator starts them: three gateway processes started at once on an
// empty database, with a configured token and with a printed one.
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { AccountsService } from '../../src/accounts/service.js';
import { systemClock } from '../../src/clock.js';
import { openStore, type Store } from '../../src/store/store.js';
import { BUILD_TIMEOUT_MS, ensureBuilt } from '../helpers/built.js';
import { startGatewayProcess, type GatewayProcess } from '../helpers/gateway-process.js';
import { newStoreLocation, noStoreAvailable, storeKind, type StoreLocation } from '../helpers/gateway.js';
import { waitFor } from '../helpers/wait.js';

const NODES = 3;
const ROUNDS = 10;
const TOKEN = 'mgw_bootstrap_race_token_0000000000000000';

const open: Store[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});

function node(location: StoreLocation): { store: Store; accounts: AccountsService } {
  const store = openStore({ databaseUrl: location.databaseUrl, dataDir: location.dataDir });
  open.push(store);
  return { store, accounts: new AccountsService(store, systemClock) };
}

async function boot(n: { store: Store; accounts: AccountsService }, token: string | null) {
  await n.store.migrate();
  return n.accounts.bootstrap(token);
}

async function contents(store: Store) {
  const accounts = await store.db.selectFrom('accounts').select(['name']).execute();
  const tokens = await store.db.selectFrom('api_tokens').select(['name', 'account_id']).execute();
  return { accounts: accounts.map((a) => a.name), tokens: tokens.length };
}

describe.skipIf(noStoreAvailable || storeKind !== 'postgres')('bootstrap raced in one process (PostgreSQL)', () => {
  it.each([['a configured token', TOKEN] as const, ['a printed token', null] as const])(
    `with %s: ${NODES} nodes at once, ${ROUNDS} rounds: none fails, one account, one token`,
    async (_what, token) => {
      // One fresh database, migrated once: each round empties what bootstrap writes and races it again (the race
      // is in bootstrap, not in the migrations, which have their own race test).
      const location = await newStoreLocation();
      try {
        const migrated = node(location);
        await migrated.store.migrate();
        for (let round = 0; round < ROUNDS; round++) {
          await migrated.store.db.deleteFrom('api_tokens').execute();
          await migrated.store.db.deleteFrom('accounts').execute();
          const nodes = Array.from({ length: NODES }, () => node(location));
          const outcomes = await Promise.allSettled(nodes.map((n) => boot(n, token)));
          const failures = outcomes.flatMap((o) => (o.status === 'rejected' ? [String(o.reason)] : []));
          expect(failures, `round ${round}`).toEqual([]);
          const printed = outcomes.flatMap((o) =>
            o.status === 'fulfilled' && o.value.printedToken !== null ? [o.value.printedToken] : [],
          );
          // A configured token is never printed; otherwise exactly one node prints the one token there is.
          expect(printed.length, `round ${round}`).toBe(token === null ? 1 : 0);
          expect(await contents(nodes[0]!.store), `round ${round}`).toEqual({ accounts: ['default'], tokens: 1 });
          await Promise.all(nodes.map((n) => n.store.close()));
          for (const n of nodes) open.splice(open.indexOf(n.store), 1);
        }
      } finally {
        await Promise.all(open.splice(0).map((s) => s.close()));
        await location.drop();
      }
    },
  );
});

describe.skipIf(noStoreAvailable || storeKind !== 'postgres')('three gateway processes at once (PostgreSQL)', () => {
  beforeAll(() => ensureBuilt(), BUILD_TIMEOUT_MS);
  const running: GatewayProcess[] = [];
  afterEach(async () => {
    await Promise.all(running.splice(0).map((g) => g.kill()));
  });

  it.each([['a configured token', TOKEN] as const, ['a printed token', ''] as const])(
    'with %s: every node listens, one account, one token',
    async (_what, token) => {
      const location = await newStoreLocation({ migrated: false });
      try {
        const starts = await Promise.allSettled(
          ['node-a', 'node-b', 'node-c'].map((name) =>
            startGatewayProcess(location, { GATEWAY_SERVER_NAME: name, GATEWAY_BOOTSTRAP_TOKEN: token }),
          ),
        );
        for (const start of starts) if (start.status === 'fulfilled') running.push(start.value);
        expect(starts.flatMap((s) => (s.status === 'rejected' ? [String(s.reason)] : []))).toEqual([]);
        const printing = () => running.filter((g) => g.output().includes('"api_token"')).length;
        // A node prints the token after it listens (src/main.ts), so the printing node is waited for; then every
        // node is stopped, and only their whole output is judged.
        if (token === '')
          await waitFor(printing, (n) => n >= 1, { what: 'a node printing the token', timeoutMs: 30_000 });
        const store = openStore({ databaseUrl: location.databaseUrl, dataDir: location.dataDir });
        open.push(store);
        expect(await contents(store)).toEqual({ accounts: ['default'], tokens: 1 });
        const outputs = await Promise.all(
          running.splice(0).map(async (g) => {
            await g.stop();
            return g.output();
          }),
        );
        expect(outputs.filter((o) => o.includes('"api_token"')).length).toBe(token === '' ? 1 : 0);
        for (const o of outputs) expect(o).not.toContain('could not create the first API token');
      } finally {
        await Promise.all(running.splice(0).map((g) => g.stop()));
        await Promise.all(open.splice(0).map((s) => s.close()));
        await location.drop();
      }
    },
  );
});
