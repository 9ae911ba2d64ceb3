// Benchmark (issue 26, Measure): reactions accepted per second (`POST /messages/{id}/reaction`) against the same
// run's `POST /messages` accept rate, on a real listening gateway (the built `dist/main.js`, sandbox network in the
// gateway process, default pacing so the queue barely sends while it is measured).
//
// Several devices are paired; each sends `targets` chat messages first (the messages reacted to). Then rounds
// alternate: autocannon posts chat messages round-robin over the devices for `seconds`, then reactions round-robin
// over every target with an emoji that changes at each visit (a reaction that changes nothing queues nothing, so
// every measured reaction is a real action with its queue row), then the other way round in the next round. The
// ratio is taken per round (the host's speed drifts); the report gives the median. Every answer must be a 200:
// the counts of other answers are printed and must be 0.
//
//   npm run build && node --import tsx bench/actions.ts [seconds per round] [rounds] [connections] [devices]
//   BENCH_STORE=postgres ... (a fresh database on the machine's PostgreSQL, dropped at the end)
//   BENCH_GATEWAY=<other build>/main.js ... (an older build, to compare in the same hour)
import autocannon from 'autocannon';
import { cpus } from 'node:os';
import { TOKEN, api, cpuMs, machine, median, pairDevice } from './lib.js';
import { loadAverage, openBenchStore, startNodes, storeKind, type Nodes } from './stores.js';

const seconds = Number(process.argv[2] ?? 5);
const rounds = Number(process.argv[3] ?? 4);
const connections = Number(process.argv[4] ?? 50);
const deviceCount = Number(process.argv[5] ?? 4);
const targetsPerDevice = 50;
const EMOJIS = ['👍', '❤️', '😂', '😮', '🙏', '🎉'];

const kind = storeKind();
const loadAtStart = loadAverage();
const store = await openBenchStore(kind);
let nodes: Nodes | null = null;
try {
  store.cli('migrate', '--create');
  nodes = await startNodes(store, 1, { LOG_LEVEL: 'info' }, null);
  const gateway = nodes.processes[0]!;
  const base = gateway.url;
  // Last four digits never 0000-0004: those are the sandbox's refusing, blocking and offline numbers.
  const phones = Array.from({ length: deviceCount }, (_, i) => `6281${String(40_000_000 + i * 10 + 7)}`);
  for (const phone of phones) await pairDevice(base, phone);
  const receiverOf = (n: number) => `6282${String(20_000_000 + (n % 500) * 10 + 7)}`;

  const targets: string[] = [];
  for (let i = 0; i < targetsPerDevice; i++) {
    const sent = await Promise.all(
      phones.map((device, d) =>
        api(base, 'POST', '/messages', {
          device,
          receiver: receiverOf(i * deviceCount + d),
          type: 'chat',
          params: { text: `target ${i}` },
        }),
      ),
    );
    targets.push(...sent.map((answer) => answer.data.id as string));
  }

  let sends = 0;
  let reactions = 0;
  const headers = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };
  const sendRequest = {
    method: 'POST' as const,
    path: '/messages',
    headers,
    setupRequest: (request: any) => {
      const n = sends++;
      request.body = JSON.stringify({
        device: phones[n % phones.length],
        receiver: receiverOf(n),
        type: 'chat',
        params: { text: `message ${n}` },
      });
      return request;
    },
  };
  const reactRequest = {
    method: 'POST' as const,
    path: '/',
    headers,
    setupRequest: (request: any) => {
      const n = reactions++;
      // Each visit to a target brings the next emoji: every reaction changes the message's reaction.
      request.path = `/messages/${targets[n % targets.length]}/reaction`;
      request.body = JSON.stringify({ emoji: EMOJIS[Math.floor(n / targets.length) % EMOJIS.length] });
      return request;
    },
  };

  const run = async (request: typeof sendRequest, duration: number) => {
    const pid = gateway.child.pid!;
    const cpuBefore = cpuMs(pid);
    const started = Date.now();
    const result = await autocannon({ url: base, connections, duration, requests: [request] });
    const wall = Date.now() - started;
    return {
      rps: Math.round(result.requests.average),
      p50_ms: result.latency.p50,
      p99_ms: result.latency.p99,
      non2xx: result.non2xx + result.errors + result.timeouts,
      gateway_cpu: Number(((cpuMs(pid) - cpuBefore) / wall).toFixed(2)),
    };
  };

  // Warm-up of both paths.
  await run(sendRequest, 2);
  await run(reactRequest, 2);
  const results = [];
  for (let round = 0; round < rounds; round++) {
    const load = loadAverage();
    const [send, react] =
      round % 2 === 0
        ? [await run(sendRequest, seconds), await run(reactRequest, seconds)]
        : await run(reactRequest, seconds).then(async (r) => [await run(sendRequest, seconds), r] as const);
    results.push({
      round: round + 1,
      load_average: load,
      send,
      react,
      ratio: Number((react.rps / send.rps).toFixed(3)),
    });
    console.error(JSON.stringify(results.at(-1)));
  }
  // The reactions really were recorded: each target shows the emoji of its last visit.
  const last = (await api(base, 'GET', `/messages/${targets[0]}`)).data;

  console.log(
    JSON.stringify(
      {
        benchmark: 'reactions accepted per second vs POST /messages in the same run',
        machine: `${machine()}, ${cpus().length} CPUs (${cpus()[0]?.model ?? 'unknown'})`,
        store: kind,
        gateway: process.env.BENCH_GATEWAY ?? 'dist/main.js',
        devices: deviceCount,
        targets: targets.length,
        seconds_per_round: seconds,
        connections,
        load_average: { start: loadAtStart, end: loadAverage() },
        rounds: results,
        median_send_rps: median(results.map((r) => r.send.rps)),
        median_react_rps: median(results.map((r) => r.react.rps)),
        median_ratio_react_to_send: Number(median(results.map((r) => r.ratio)).toFixed(3)),
        all_answers_200: results.every((r) => r.send.non2xx === 0 && r.react.non2xx === 0),
        requests_made: { sends, reactions },
        first_target_reactions: last.reactions ?? null,
      },
      null,
      2,
    ),
  );
} finally {
  await nodes?.stop();
  await store.close();
}
