// Benchmark (issue 25, Speed): the `POST /messages` accept rate while the gateway delivers webhooks, against the
// same gateway accepting with no webhook to deliver (goal: at least 0.7 of it).
//
// Method: one gateway process (`dist/main.js`, SQLite, in-process sandbox, GATEWAY_SEND_INTERVAL_MS=0, so every
// accepted message is sent at once and yields message.sent, message.delivered and message.read) with four paired
// devices. A node:http receiver in this process answers every delivery 200. Rounds alternate which mode goes first:
// "with" sets each device's webhook_url to the receiver, "without" clears it (the events are still logged, so only
// the delivery is left out). Before each measurement the gateway is left to finish what the round before queued (no
// message pending, no delivery arriving for a second). autocannon posts chat messages on 50 connections spread over
// the devices; each round gives a ratio with / without, and the report takes the median.
//
//   npm run build && node --import tsx bench/accept-delivering.ts [seconds per round] [rounds] [connections]
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { api, cpuLoad, machine, median, pairDevice, startGateway, type LoadResult } from './lib.js';
import { loadAverage } from './stores.js';

const seconds = Number(process.argv[2] ?? 5);
const rounds = Number(process.argv[3] ?? 4);
const connections = Number(process.argv[4] ?? 50);
const devices = ['6281100000011', '6281100000012', '6281100000013', '6281100000014'];

let delivered = 0;
let lastDeliveryAt = 0;
const receiver = createServer((request, response) => {
  request.resume();
  request.on('end', () => {
    delivered++;
    lastDeliveryAt = Date.now();
    response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
});
await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
const hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;

const gateway = await startGateway({
  GATEWAY_SEND_INTERVAL_MS: '0',
  GATEWAY_ALLOW_PRIVATE_URLS: 'true',
  LOG_LEVEL: 'info',
});
const ids: number[] = [];
for (const phone of devices) ids.push(await pairDevice(gateway.url, phone));

const setWebhooks = async (url: string | null) => {
  for (const id of ids) await api(gateway.url, 'PATCH', `/devices/${id}`, { webhook_url: url });
};

/** Waits until no message is pending and no delivery arrived for a second (what the last round queued is done). */
async function settle(): Promise<void> {
  for (let i = 0; i < 600; i++) {
    const pending = await api(gateway.url, 'GET', `/messages?status=pending&limit=1`);
    const quiet = Date.now() - lastDeliveryAt > 1_000;
    if ((pending.data as unknown[]).length === 0 && quiet) return;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  throw new Error('the gateway did not settle in 5 minutes');
}

let turn = 0;
const body = () => {
  // One body per load run: the device rotates from run to run so every lane takes part over the rounds.
  const device = devices[turn++ % devices.length]!;
  return JSON.stringify({
    device,
    receiver: '6281200000001',
    type: 'chat',
    params: { text: 'accept while delivering' },
  });
};

const measure = async (mode: 'with' | 'without'): Promise<LoadResult & { delivered_during: number }> => {
  await setWebhooks(mode === 'with' ? hookUrl : null);
  await settle();
  const before = delivered;
  const result = await cpuLoad(gateway, '/messages', 'POST', body(), seconds, true, connections, 1);
  return { ...result, delivered_during: delivered - before };
};

const results: Array<Record<string, unknown>> = [];
try {
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? (['with', 'without'] as const) : (['without', 'with'] as const);
    const entry: Record<string, unknown> = { round: round + 1, load_average: loadAverage() };
    for (const mode of order) entry[mode] = await measure(mode);
    const withRps = (entry.with as LoadResult).rps;
    const withoutRps = (entry.without as LoadResult).rps;
    entry.ratio = Number((withRps / withoutRps).toFixed(3));
    results.push(entry);
    console.error(JSON.stringify(entry));
  }
  console.log(
    JSON.stringify(
      {
        benchmark: 'POST /messages accept rate while delivering webhooks vs with none to deliver',
        machine: machine(),
        at: new Date().toISOString(),
        seconds_per_round: seconds,
        connections,
        devices: devices.length,
        rounds: results,
        median_ratio_with_to_without: median(results.map((r) => r.ratio as number)),
        delivered_in_all: delivered,
      },
      null,
      2,
    ),
  );
} finally {
  await gateway.stop();
  await new Promise((resolve) => receiver.close(resolve));
}
