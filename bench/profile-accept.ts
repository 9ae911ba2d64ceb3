import autocannon from 'autocannon';
import { TOKEN, pairDevice, startProcess } from './lib.js';
import { mkdtemp } from 'node:fs/promises';
const dataDir = await mkdtemp('/tmp/gwprof-');
const gw = await startProcess(['--cpu-prof', '--cpu-prof-dir=/tmp/cpuprof', 'dist/main.js'], {
  PORT: '0',
  GATEWAY_DATA_DIR: dataDir,
  GATEWAY_BOOTSTRAP_TOKEN: TOKEN,
});
await pairDevice(gw.url, '6281100000001');
const body = JSON.stringify({
  device: '6281100000001',
  receiver: '6281200000001',
  type: 'chat',
  params: { text: 'Hello from the benchmark' },
});
const r = await autocannon({
  url: `${gw.url}/messages`,
  method: 'POST',
  connections: 50,
  duration: 6,
  headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
  body,
});
console.log('rps', r.requests.average, 'p99', r.latency.p99);
await gw.stop();
