// Benchmark: accepted `chat` messages per second on POST /messages, against a
// real listening gateway (SQLite, durable group commits, default pacing),
// compared with a bare node:http server that parses the same body
// (bench/bare-server.ts). Also the CPU each server and the load generator used.
//
// The two are measured in alternating rounds, both servers up throughout, and
// the ratio is taken per round: on a shared virtual machine the speed of the
// host drifts by tens of percent from minute to minute, which a single run of
// each, a minute apart, would mistake for a difference between them.
//   npm run build && node --import tsx bench/accept.ts [seconds per round] [rounds] [connections]
import { api, cpuLoad, machine, median, pairDevice, startGateway, startProcess, type LoadResult } from './lib.js';

const seconds = Number(process.argv[2] ?? 5);
const rounds = Number(process.argv[3] ?? 4);
const connections = Number(process.argv[4] ?? 50);

const body = JSON.stringify({
  device: '6281100000001',
  receiver: '6281200000001',
  type: 'chat',
  params: { text: 'Hello from the benchmark: *bold* _italic_ ~strike~ `mono`' },
});

const gateway = await startGateway();
await pairDevice(gateway.url, '6281100000001');
const bare = await startProcess(['--import', 'tsx', 'bench/bare-server.ts'], {});

const loadGateway = (warmUp: number) => cpuLoad(gateway, '/messages', 'POST', body, seconds, true, connections, warmUp);
const loadBare = (warmUp: number) => cpuLoad(bare, '/', 'POST', body, seconds, false, connections, warmUp);

const results: Array<{ gateway: LoadResult; bare: LoadResult; ratio: number }> = [];
for (let round = 0; round < rounds; round++) {
  const warmUp = round === 0 ? 2 : 0;
  // Alternate which goes first, so neither always runs on the warmer or cooler half of a round.
  const [g, b] =
    round % 2 === 0
      ? [await loadGateway(warmUp), await loadBare(warmUp)]
      : await loadBare(warmUp).then(async (b) => [await loadGateway(warmUp), b] as const);
  results.push({ gateway: g, bare: b, ratio: Number((g.rps / b.rps).toFixed(3)) });
}
const stored = (await api(gateway.url, 'GET', '/devices/1')).data.subscription.quote_used;
const gatewayAnswers = results.reduce((sum, r) => sum + r.gateway.total, 0);
await gateway.stop();
await bare.stop();

const report = {
  benchmark: 'POST /messages acceptance',
  machine: machine(),
  seconds_per_round: seconds,
  connections,
  rounds: results.map((r) => ({
    gateway_rps: r.gateway.rps,
    gateway_p50_ms: r.gateway.p50,
    gateway_p99_ms: r.gateway.p99,
    gateway_non2xx: r.gateway.non2xx + r.gateway.errors,
    gateway_cpu: r.gateway.server_cpu,
    bare_rps: r.bare.rps,
    bare_p99_ms: r.bare.p99,
    bare_cpu: r.bare.server_cpu,
    ratio: r.ratio,
  })),
  median_ratio: Number(median(results.map((r) => r.ratio)).toFixed(3)),
  worst_gateway_p99_ms: Math.max(...results.map((r) => r.gateway.p99)),
  // Every answered request was a 200 and was stored (the warm-up's too, hence "at least").
  messages_in_store: Number(stored),
  gateway_answers_measured: gatewayAnswers,
};
console.log(JSON.stringify(report, null, 2));
