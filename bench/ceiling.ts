// How far the HTTP layers alone reach, for reading bench:accept: the same load
// on (a) /healthz (routing, logging, no auth, no body) and (b) POST /messages for
// a device that is not connected (auth, JSON parsing, validation, the cached
// sender lookup, an error answer; no write).
//   npm run build && node --import tsx bench/ceiling.ts [seconds]
import autocannon from 'autocannon';
import { TOKEN, api, startGateway } from './lib.js';

const seconds = Number(process.argv[2] ?? 8);
const gateway = await startGateway();
await api(gateway.url, 'POST', '/devices', { package: 'BETA', name: 'idle', phone: '6281999999997' });
const run = async (path: string, method: 'GET' | 'POST', body?: string) => {
  const r = await autocannon({
    url: `${gateway.url}${path}`,
    method,
    connections: 50,
    duration: seconds,
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body }),
  });
  return { rps: r.requests.average, p99: r.latency.p99 };
};
const healthz = await run('/healthz', 'GET');
const noWrite = await run(
  '/messages',
  'POST',
  JSON.stringify({ device: '6281999999997', receiver: '6281200000001', type: 'chat', params: { text: 'Hello' } }),
);
await gateway.stop();
console.log(JSON.stringify({ healthz, post_messages_without_write: noWrite }, null, 2));
