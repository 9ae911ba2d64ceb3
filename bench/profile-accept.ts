// A CPU profile of the gateway under the acceptance benchmark's load (`node --cpu-prof`), written to /tmp/cpuprof
// and summarized with bench/cpuprofile-summary.ts. PROFILE_PATH=refused posts to a device that is not connected
// (the refused path of bench/ladder.ts) instead of a paired one.
//   npm run build && node --import tsx bench/profile-accept.ts [seconds]
//   node --import tsx bench/cpuprofile-summary.ts /tmp/cpuprof/<newest>.cpuprofile
import autocannon from 'autocannon';
import { TOKEN, api, pairDevice, startProcess } from './lib.js';
import { mkdtemp } from 'node:fs/promises';

const seconds = Number(process.argv[2] ?? 6);
const refused = process.env.PROFILE_PATH === 'refused';
const dataDir = await mkdtemp('/tmp/gwprof-');
const gw = await startProcess(['--cpu-prof', '--cpu-prof-dir=/tmp/cpuprof', 'dist/main.js'], {
  PORT: '0',
  GATEWAY_DATA_DIR: dataDir,
  GATEWAY_BOOTSTRAP_TOKEN: TOKEN,
});
let device = '6281100000001';
if (refused) {
  device = '6281999999997';
  await api(gw.url, 'POST', '/devices', { package: 'BETA', name: 'idle', phone: device });
} else {
  await pairDevice(gw.url, device);
}
const body = JSON.stringify({
  device,
  receiver: '6281200000001',
  type: 'chat',
  params: { text: 'Hello from the benchmark' },
});
const r = await autocannon({
  url: `${gw.url}/messages`,
  method: 'POST',
  connections: 50,
  duration: seconds,
  headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
  body,
});
console.log(refused ? 'refused' : 'accepted', 'rps', r.requests.average, 'p99', r.latency.p99, 'non2xx', r.non2xx);
await gw.stop();
