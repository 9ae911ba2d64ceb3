// Memory per WhatsApp device connection, against a local stand-in for
// WhatsApp Web that accepts each socket and then stays silent (the handshake
// never completes: no WhatsApp server is reachable from here). A lower bound
// for an idle connected device: the connector, its stored-session state and a
// real Baileys socket each, but no session traffic, no groups, no history.
//
//   node --expose-gc --import tsx bench/whatsapp-memory.ts [steps...]   (default 100 200 300)
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { WebSocketServer } from 'ws';
import { systemClock } from '../src/clock.js';
import { SqlNetworkStateStore } from '../src/devices/network-state.js';
import type { NetworkConnection } from '../src/network/network.js';
import { loadSessionAuth } from '../src/network/whatsapp/auth-state.js';
import { createWhatsAppNetwork } from '../src/network/whatsapp/index.js';
import { Sealer } from '../src/network/whatsapp/seal.js';
import { realSocketFactory } from '../src/network/whatsapp/socket-port.js';
import { openStore } from '../src/store/store.js';

const steps = process.argv.slice(2).map(Number);
const STEPS = steps.length > 0 ? steps : [100, 200, 300];
const KEYS = { current: Buffer.alloc(32, 0x5a), previous: [] };
const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error('run with node --expose-gc');

async function settle(): Promise<{ rss: number; heap: number }> {
  for (let i = 0; i < 3; i++) {
    gc!();
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  const usage = process.memoryUsage();
  return { rss: usage.rss, heap: usage.heapUsed };
}

const mb = (bytes: number) => (bytes / 1024 / 1024).toFixed(1);
const kb = (bytes: number) => (bytes / 1024).toFixed(0);

const dir = await mkdtemp(join(tmpdir(), 'wa-mem-'));
const store = openStore({ databaseUrl: null, dataDir: dir });
await store.migrate();
const states = new SqlNetworkStateStore(store, systemClock);
const sealer = new Sealer(KEYS);

let accepted = 0;
const server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
server.on('connection', () => {
  accepted += 1;
});
await new Promise<void>((resolve) => server.once('listening', () => resolve()));
const { port } = server.address() as { port: number };

const network = createWhatsAppNetwork({
  states,
  keys: KEYS,
  logger: pino({ level: 'silent' }),
  factory: realSocketFactory({ url: `ws://127.0.0.1:${port}/ws/chat`, connectTimeoutMs: 600_000 }),
});

console.log(
  JSON.stringify({ machine: `${cpus().length} × ${cpus()[0]?.model}, ${mb(totalmem())} MB`, node: process.version }),
);
const base = await settle();
console.log(JSON.stringify({ devices: 0, rss_mb: mb(base.rss), heap_mb: mb(base.heap) }));

const connections: NetworkConnection[] = [];
let previous = { devices: 0, ...base };
for (const target of STEPS) {
  while (connections.length < target) {
    const i = connections.length;
    // A device paired earlier: sealed credentials in the store, as the connector leaves them.
    const session = `wa1.00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;
    const writer = (await states.claim(session, { create: true }))!;
    const auth = await loadSessionAuth(writer, sealer, { fresh: true });
    auth.state.creds.me = { id: `49151${String(i).padStart(7, '0')}:1@s.whatsapp.net` };
    await auth.saveCreds();
    connections.push(network.connect({ deviceId: i, session }, () => undefined));
  }
  const deadline = Date.now() + 60_000;
  while (accepted < target && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
  const now = await settle();
  const added = target - previous.devices;
  console.log(
    JSON.stringify({
      devices: target,
      sockets_open: accepted,
      rss_mb: mb(now.rss),
      heap_mb: mb(now.heap),
      rss_kb_per_device_step: kb((now.rss - previous.rss) / added),
      heap_kb_per_device_step: kb((now.heap - previous.heap) / added),
    }),
  );
  previous = { devices: target, ...now };
}

await network.close();
await new Promise((resolve) => setTimeout(resolve, 500));
for (const client of server.clients) client.terminate();
await new Promise<void>((resolve) => server.close(() => resolve()));
await store.close();
await rm(dir, { recursive: true, force: true });
// Baileys leaves handshake timers of ended sockets pending until their timeout; do not wait for them.
process.exit(0);
