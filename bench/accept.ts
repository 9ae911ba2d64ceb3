// Benchmark: accepted `chat` messages per second on POST /messages, against a
// real listening gateway (SQLite, durable group commits, default pacing), and
// in the same run a bare node:http server parsing the same body.
//   npm run build && node --import tsx bench/accept.ts [seconds] [connections]
import autocannon from 'autocannon';
import { TOKEN, api, machine, pairDevice, startGateway, startProcess } from './lib.js';

const seconds = Number(process.argv[2] ?? 10);
const connections = Number(process.argv[3] ?? 50);

const body = JSON.stringify({
  device: '6281100000001',
  receiver: '6281200000001',
  type: 'chat',
  params: { text: 'Hello from the benchmark: *bold* _italic_ ~strike~ `mono`' },
});

async function load(url: string, path: string) {
  const result = await autocannon({
    url: `${url}${path}`,
    method: 'POST',
    connections,
    duration: seconds,
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body,
  });
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors,
    total: result.requests.total,
  };
}

const gateway = await startGateway();
await pairDevice(gateway.url, '6281100000001');
// warm up
await autocannon({
  url: `${gateway.url}/messages`,
  method: 'POST',
  connections,
  duration: 2,
  headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
  body,
});
const gw = await load(gateway.url, '/messages');
const stored = (await api(gateway.url, 'GET', '/devices/1')).data.subscription.quote_used;
await gateway.stop();

const bare = await startProcess(['--import', 'tsx', 'bench/bare-server.ts'], {});
await autocannon({
  url: `${bare.url}/`,
  method: 'POST',
  connections,
  duration: 2,
  body,
  headers: { 'content-type': 'application/json' },
});
const base = await load(bare.url, '/');
await bare.stop();

const report = {
  benchmark: 'POST /messages acceptance',
  machine: machine(),
  seconds,
  connections,
  gateway: gw,
  bare: base,
  ratio: Number((gw.rps / base.rps).toFixed(3)),
  messages_accepted_in_store: Number(stored),
};
console.log(JSON.stringify(report, null, 2));
