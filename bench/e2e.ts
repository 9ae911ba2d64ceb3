// Benchmark: end-to-end rate with pacing off. N paired sandbox devices
// (default 1,000), M chat messages accepted over HTTP, timed from the first
// acceptance until every one is `delivered` (counted in the store). Also the
// gateway's memory per connected device (one node).
//
//   npm run build && node --import tsx bench/e2e.ts [devices] [messages] [connections]
//
// BENCH_STORE=postgres runs the gateways on a fresh database of the machine's
// PostgreSQL (dropped at the end). BENCH_NODES is a list of rounds, each the
// number of gateway processes sharing the store, e.g. "1,3,3,1": the devices
// are paired once; each round starts its nodes, waits until every device is
// connected and the leases are spread evenly, sends M messages spread over
// the nodes (one autocannon per node, the connections divided between them)
// and stops the nodes. On PostgreSQL every round uses a sandbox process (so 1
// and 3 nodes have the same arrangement); on SQLite (one node) the sandbox
// runs in the gateway, as it always did here. Rounds alternate so that the
// host's drift falls on both sides.
//
// BENCH_ANALYZE=1 (PostgreSQL): the database is analyzed before each round, as autovacuum does within its first
// minute on a new store; without it, the first round runs on the plans PostgreSQL made for empty tables.
import autocannon from 'autocannon';
import { readFile } from 'node:fs/promises';
import { cpus } from 'node:os';
import pg from 'pg';
import { TOKEN, cpuMs, machine, pairDevice, type Running } from './lib.js';
import { loadAverage, openBenchStore, spread, startNodes, startSandbox, storeKind, type Nodes } from './stores.js';

const devices = Number(process.argv[2] ?? 1000);
const total = Number(process.argv[3] ?? 100_000);
const connections = Number(process.argv[4] ?? 50);
const kind = storeKind();
const rounds = (process.env.BENCH_NODES ?? '1').split(',').map(Number);
if (rounds.some((n) => !Number.isSafeInteger(n) || n < 1)) throw new Error(`BENCH_NODES: ${process.env.BENCH_NODES}`);

const loadAtStart = loadAverage();
const store = await openBenchStore(kind);
let sandbox: Running | null = null;
let nodes: Nodes | null = null;
try {
  const env = { GATEWAY_SEND_INTERVAL_MS: '0', LOG_LEVEL: 'info' };
  store.cli('migrate', '--create');
  // The bootstrap account may hold 10 devices by default; raise it the way an operator would.
  store.cli('accounts', 'create', 'bench', '--max-devices', '1');
  if (kind === 'postgres') sandbox = await startSandbox();

  const names = (n: number) => Array.from({ length: n }, (_, i) => `node${i + 1}`);
  nodes = await startNodes(store, rounds[0]!, env, sandbox);
  store.cli('accounts', 'set-limit', 'default', String(devices));

  async function rssKb(pid: number): Promise<number> {
    const status = await readFile(`/proc/${pid}/status`, 'utf8');
    return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  }
  const firstPid = nodes.processes[0]!.child.pid!;
  const rssBefore = await rssKb(firstPid);
  const phones: string[] = [];
  for (let i = 0; i < devices; i += 20) {
    const batch = Array.from(
      { length: Math.min(20, devices - i) },
      (_, j) => `6281${String(30_000_000 + (i + j) * 10 + 7)}`,
    );
    const urls = nodes.urls;
    await Promise.all(batch.map((phone, j) => pairDevice(urls[(i + j) % urls.length]!, phone)));
    phones.push(...batch);
  }
  const rssPaired = await rssKb(firstPid);

  /** CPU (ms) of the PostgreSQL backends serving this benchmark's database. */
  const backendPids = async (): Promise<number[]> => {
    if (kind !== 'postgres') return [];
    const client = new pg.Client({ connectionString: store.env.DATABASE_URL });
    await client.connect();
    const { rows } = await client.query<{ pid: number }>(
      'select pid from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()',
    );
    await client.end();
    return rows.map((r) => r.pid);
  };
  const cpuOf = (pids: readonly number[]) =>
    new Map(
      pids.map((pid) => {
        try {
          return [pid, cpuMs(pid)] as const;
        } catch {
          return [pid, 0] as const; // gone
        }
      }),
    );

  const results: Array<{ nodes: number; end_to_end_rate: number } & Record<string, unknown>> = [];
  let sent = 0;
  for (const [r, count] of rounds.entries()) {
    if (r > 0) {
      await nodes.stop();
      nodes = await startNodes(store, count, env, sandbox);
    }
    const ready = await spread(store, names(count), devices);
    // As autovacuum would have by now on a store in use (bench/README.md, Plans made for empty tables).
    await store.analyzeIfAsked();
    const before = await store.delivered();
    const gatewayCpu = nodes.processes.map((p) => cpuMs(p.child.pid!));
    const pgPids = await backendPids();
    const pgCpu = cpuOf(pgPids);
    const load = loadAverage();
    const started = Date.now();
    const urls = nodes.urls;
    // Counted from the start, beside the load: autocannon ends a run only at its next one-second
    // tick, so waiting for it before counting would round every round up to whole seconds.
    const allDelivered = (async () => {
      for (;;) {
        const count = (await store.delivered()) - before;
        if (count >= total || Date.now() - started > 900_000) return { count, at: Date.now() };
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    })();
    let lastAnswerAt = started;
    const answers = await Promise.all(
      urls.map(
        (url, i) =>
          new Promise<autocannon.Result>((resolve, reject) => {
            const instance = autocannon(
              {
                url,
                connections: Math.max(1, Math.round(connections / urls.length)),
                amount: Math.floor(total / urls.length) + (i < total % urls.length ? 1 : 0),
                requests: [
                  {
                    method: 'POST',
                    path: '/messages',
                    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
                    setupRequest: (request: any) => {
                      const n = sent++;
                      request.body = JSON.stringify({
                        device: phones[n % phones.length],
                        // Last digits never 0000-0004: those are the sandbox's magic numbers.
                        receiver: `6282${String(10_000_000 + (n % 5000) * 10 + 7)}`,
                        type: 'chat',
                        params: { text: `message ${n}` },
                      });
                      return request;
                    },
                  },
                ],
              },
              (error, result) => (error ? reject(error) : resolve(result)),
            );
            instance.on('response', () => {
              lastAnswerAt = Date.now();
            });
          }),
      ),
    );
    const { count: delivered, at: doneAt } = await allDelivered;
    const acceptedAt = lastAnswerAt;
    const wall = doneAt - started;
    const gatewayUsed = nodes.processes.map((p, i) => cpuMs(p.child.pid!) - gatewayCpu[i]!);
    const pgAfter = cpuOf(pgPids);
    const pgUsed = pgPids.reduce((sum, pid) => sum + Math.max(0, (pgAfter.get(pid) ?? 0) - (pgCpu.get(pid) ?? 0)), 0);
    const round = {
      round: r + 1,
      nodes: count,
      spread_seconds: ready.seconds,
      connected_per_node: ready.counts,
      accepted_2xx: answers.reduce((sum, a) => sum + a['2xx'], 0),
      non2xx: answers.reduce((sum, a) => sum + a.non2xx, 0),
      acceptance_seconds: (acceptedAt - started) / 1000,
      acceptance_rate: Math.round(total / ((acceptedAt - started) / 1000)),
      delivered,
      accepted_to_all_delivered_seconds: wall / 1000,
      end_to_end_rate: Math.round(delivered / (wall / 1000)),
      // Cores used on average during the round (1 = one core busy).
      gateway_cpu: gatewayUsed.map((ms) => Number((ms / wall).toFixed(2))),
      postgres_cpu: kind === 'postgres' ? Number((pgUsed / wall).toFixed(2)) : null,
      cpu_ms_per_message: {
        gateways: Number((gatewayUsed.reduce((a, b) => a + b, 0) / delivered).toFixed(3)),
        ...(kind === 'postgres' ? { postgres: Number((pgUsed / delivered).toFixed(3)) } : {}),
      },
      load_average_at_start: load,
    };
    console.error(JSON.stringify(round));
    results.push(round);
  }
  const rssEnd = await rssKb(nodes.processes[0]!.child.pid!);
  await nodes.stop();
  nodes = null;

  const rate = (n: number) => results.filter((x) => x.nodes === n).map((x) => x.end_to_end_rate);
  const ones = rate(1);
  const threes = rate(3);
  console.log(
    JSON.stringify(
      {
        benchmark: 'end to end, pacing off',
        machine: `${machine()}, ${cpus().length} CPUs (${cpus()[0]?.model ?? 'unknown'})`,
        store: kind,
        sandbox: sandbox === null ? 'in the gateway process' : 'its own process',
        devices,
        messages_per_round: total,
        connections,
        load_average: { start: loadAtStart, end: loadAverage() },
        rounds: results,
        ...(ones.length > 0 && threes.length > 0
          ? {
              three_vs_one:
                // Each 3-node round against the 1-node round next to it (the one before, else after).
                results
                  .map((x, i) => {
                    if (x.nodes !== 3) return null;
                    const one = results[i - 1]?.nodes === 1 ? results[i - 1] : results[i + 1];
                    return one?.nodes === 1 ? Number((x.end_to_end_rate / one.end_to_end_rate).toFixed(2)) : null;
                  })
                  .filter((v) => v !== null),
            }
          : {}),
        rss_mb: {
          start: Math.round(rssBefore / 1024),
          paired: Math.round(rssPaired / 1024),
          end: Math.round(rssEnd / 1024),
        },
        rss_kb_per_device: rounds[0] === 1 ? Math.round((rssPaired - rssBefore) / devices) : null,
      },
      null,
      2,
    ),
  );
} finally {
  await nodes?.stop();
  await sandbox?.stop();
  await store.close();
}
