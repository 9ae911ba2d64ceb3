// Where the acceptance benchmark's time goes, one layer at a time, under the
// same load (autocannon, 50 connections, the same chat body):
//   1. bare node:http (bench/bare-server.ts), the baseline of bench:accept;
//   2. Fastify, one route, no logging (bench/fastify-floor.ts);
//   3. the same with one buffered JSON log line per request, as the gateway writes;
//   4. the gateway's GET /healthz (routing, request id, log line, metrics; no auth, no body);
//   5. the gateway's POST /messages to a device that is not connected (auth, JSON,
//      validation, the sender lookup, an error answer; no write);
//   6. the gateway's POST /messages, accepted: all of that plus the durable group commit.
// All servers stay up; the paths are measured in turn, round after round, and
// each path's share of the bare server is the median over rounds of its share
// within the round (the host's speed drifts; see bench/accept.ts).
//   npm run build && node --import tsx bench/ladder.ts [seconds per path] [rounds]
import { api, cpuLoad, machine, median, pairDevice, startGateway, startProcess, type Running } from './lib.js';

const seconds = Number(process.argv[2] ?? 4);
const rounds = Number(process.argv[3] ?? 3);
const chat = (device: string) =>
  JSON.stringify({
    device,
    receiver: '6281200000001',
    type: 'chat',
    params: { text: 'Hello from the benchmark: *bold* _italic_ ~strike~ `mono`' },
  });

const bare = await startProcess(['--import', 'tsx', 'bench/bare-server.ts'], {});
const floor = await startProcess(['--import', 'tsx', 'bench/fastify-floor.ts'], {});
const floorLogged = await startProcess(['--import', 'tsx', 'bench/fastify-floor.ts'], { FLOOR_LOG: '1' });
const gateway = await startGateway();
await api(gateway.url, 'POST', '/devices', { package: 'BETA', name: 'idle', phone: '6281999999997' });
await pairDevice(gateway.url, '6281100000001');

interface Path {
  readonly name: string;
  readonly server: Running;
  readonly path: string;
  readonly method: 'GET' | 'POST';
  readonly body: string | undefined;
  readonly token: boolean;
}
const paths: Path[] = [
  { name: 'bare node:http', server: bare, path: '/', method: 'POST', body: chat('6281100000001'), token: false },
  {
    name: 'Fastify, one route, no log',
    server: floor,
    path: '/',
    method: 'POST',
    body: chat('6281100000001'),
    token: false,
  },
  {
    name: 'Fastify, one route, one log line',
    server: floorLogged,
    path: '/',
    method: 'POST',
    body: chat('6281100000001'),
    token: false,
  },
  { name: 'gateway GET /healthz', server: gateway, path: '/healthz', method: 'GET', body: undefined, token: true },
  {
    name: 'gateway POST /messages, device not connected (no write)',
    server: gateway,
    path: '/messages',
    method: 'POST',
    body: chat('6281999999997'),
    token: true,
  },
  {
    name: 'gateway POST /messages, accepted',
    server: gateway,
    path: '/messages',
    method: 'POST',
    body: chat('6281100000001'),
    token: true,
  },
];

const shares = paths.map(() => [] as number[]);
const rps = paths.map(() => [] as number[]);
for (let round = 0; round < rounds; round++) {
  let bareRps = 0;
  for (const [i, p] of paths.entries()) {
    const result = await cpuLoad(p.server, p.path, p.method, p.body, seconds, p.token, 50, round === 0 ? 2 : 0);
    if (i === 0) bareRps = result.rps;
    rps[i]!.push(result.rps);
    shares[i]!.push(result.rps / bareRps);
  }
}
for (const server of [gateway, bare, floor, floorLogged]) await server.stop();

console.log(
  JSON.stringify(
    {
      benchmark: 'acceptance ladder',
      machine: machine(),
      seconds_per_path: seconds,
      rounds,
      rows: paths.map((p, i) => ({
        path: p.name,
        rps_per_round: rps[i],
        median_share_of_bare: Number(median(shares[i]!).toFixed(2)),
      })),
    },
    null,
    2,
  ),
);
