// What a gateway process costs from its spawn until it has settled: it listens, pairs one sandbox device, accepts and
// sends one chat, and then idles for a second (the message schemas compile in turns after listening). Its CPU (user +
// system, from /proc) at that point, per build, alternating the builds round by round; medians. The gateway
// processes the tests start (test/helpers/gateway-process.ts) pay this each.
//
//   npm run build && node --import tsx bench/start-cost.ts [rounds=7] [entry ...]
//
// Each entry is a built `dist/main.js` (default: this checkout's); name an older build's to compare.
import { api, cpuMs, pairDevice, startGateway } from './lib.js';

const rounds = Number(process.argv[2] ?? 7);
const entries = process.argv.length > 3 ? process.argv.slice(3) : ['dist/main.js'];
const cpu = new Map<string, number[]>(entries.map((entry) => [entry, []]));
const settle = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

for (let round = 0; round < rounds; round++) {
  const order = round % 2 === 0 ? entries : [...entries].reverse();
  for (const entry of order) {
    process.env.BENCH_GATEWAY = entry;
    const gw = await startGateway();
    await pairDevice(gw.url, '6281100000001');
    await api(gw.url, 'POST', '/messages', {
      device: '6281100000001',
      receiver: '6281200000001',
      type: 'chat',
      params: { text: 'one message' },
    });
    await settle(1_000);
    cpu.get(entry)!.push(cpuMs(gw.child.pid!));
    await gw.stop();
  }
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
for (const [entry, values] of cpu) {
  console.log(JSON.stringify({ entry, rounds, cpu_ms: values, median_cpu_ms: median(values) }));
}
