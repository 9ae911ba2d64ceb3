// docs/internals.md, Sending: a 200 from POST /messages is given
// only after the message is committed, so a gateway killed outright (SIGKILL:
// no shutdown code runs) loses none of the messages it answered 200, and the
// next gateway on the same store sends each of them; messages that were in
// flight at the kill are sent again under the same id, so the phone still
// sees every message exactly once.
//
// Real processes, real HTTP: the sandbox is its own process (it outlives the
// gateway, with its inboxes), the gateway is a child process started from
// src/main.ts, and several client loops send as fast as they can until the
// gateway is killed under them.
import { Agent } from 'undici';
import { beforeAll, describe, expect, it } from 'vitest';
import { connectSandboxNetwork } from '../../src/network/sandbox/index.js';
import { openStore } from '../../src/store/store.js';
import { newStoreLocation, noStoreAvailable } from '../helpers/gateway.js';
import { BUILD_TIMEOUT_MS, ensureBuilt } from '../helpers/built.js';
import { httpClient, startGatewayProcess, type GatewayProcess } from '../helpers/gateway-process.js';
import { startSandboxProcess } from '../helpers/sandbox-process.js';
import { waitFor } from '../helpers/wait.js';

const DEVICE_PHONE = '6281900005101';
/** Messages are spread over these phones, so none nears the inbox limit of 1000. */
const RECEIVERS = Array.from({ length: 20 }, (_, i) => `62819999${String(5100 + i)}`);
const LOOPS = 8;
/** Sending runs at least this long and until this many messages were answered 200, then the gateway is killed... */
const SEND_FOR_MS = 1200;
const MIN_ANSWERED = 200;
/** ...or earlier, once this many were answered (a fast gateway), so the phones never hold more than 900 each. */
const KILL_AT_ANSWERED = RECEIVERS.length * 800;
const MAX_SENDS = RECEIVERS.length * 900;

type Client = ReturnType<typeof httpClient>;

/** Runs `work` over `items`, `width` at a time. */
async function eachLimited<T>(items: readonly T[], width: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) await work(items[next++]!);
    }),
  );
}

/** Every outgoing message the store holds, through the API (newest first, page by page). */
async function storedIds(call: Client): Promise<Set<string>> {
  const ids = new Set<string>();
  let cursor: string | null = null;
  do {
    const page: { status: number; body: any } = await call(
      'GET',
      `/messages?direction=outgoing&limit=100${cursor === null ? '' : `&cursor=${cursor}`}`,
    );
    expect(page.status).toBe(200);
    for (const m of page.body.data) ids.add(m.id);
    cursor = page.body.next_cursor;
  } while (cursor !== null);
  return ids;
}

describe.skipIf(noStoreAvailable)('crash safety', () => {
  beforeAll(() => ensureBuilt(), BUILD_TIMEOUT_MS);
  it('loses no answered message to a SIGKILL, and the phones see each exactly once, in order', async () => {
    const location = await newStoreLocation();
    const sandbox = await startSandboxProcess();
    const agent = new Agent({ connections: LOOPS * 2 });
    const gateways: GatewayProcess[] = [];
    try {
      const env = { GATEWAY_NETWORK: `sandbox+${sandbox.url}`, GATEWAY_SEND_INTERVAL_MS: '0' };
      const first = await startGatewayProcess(location, env);
      gateways.push(first);
      const call = httpClient(first.port, agent);

      // Pair a device over HTTP, the way a client would.
      const created = await call('POST', '/devices', { package: 'STARTUP240K', name: 'crash test' });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      const deviceId = created.body.data.id as number;
      const qr = await call('GET', `/sandbox/devices/${deviceId}/qr`);
      expect(qr.status, JSON.stringify(qr.body)).toBe(200);
      const scan = await call('POST', '/sandbox/scan', { qr: qr.body.data.qr, phone: DEVICE_PHONE });
      expect(scan.status, JSON.stringify(scan.body)).toBe(200);
      await waitFor(
        async () => (await call('GET', `/devices/${deviceId}`)).body.data,
        (d) => d.paired_status === 'PAIRED' && d.connected === true,
        { what: 'paired and connected' },
      );

      // Send from several loops until the gateway dies under them; only 200s count.
      const answered = new Map<string, string>(); // id -> receiver
      const unexpected: Array<{ status: number; body: unknown }> = [];
      let failed = 0;
      let sends = 0;
      let stop = false;
      const loop = async () => {
        while (!stop && sends < MAX_SENDS) {
          const n = sends++;
          const receiver = RECEIVERS[n % RECEIVERS.length]!;
          try {
            const res = await call('POST', '/messages', {
              device: DEVICE_PHONE,
              receiver,
              type: 'chat',
              params: { text: `crash ${n}` },
            });
            if (res.status === 200) answered.set(res.body.data.id, receiver);
            else unexpected.push(res);
          } catch {
            failed += 1; // the gateway is gone
            return;
          }
        }
      };
      const startedAt = Date.now();
      const loops = Array.from({ length: LOOPS }, loop);
      await waitFor(
        () => ({ n: answered.size, ms: Date.now() - startedAt }),
        ({ n, ms }) => n >= MIN_ANSWERED && (ms >= SEND_FOR_MS || n >= KILL_AT_ANSWERED),
        { what: 'sends flowing', timeoutMs: 15_000 },
      );
      const answeredBeforeKill = answered.size;
      await first.kill();
      stop = true;
      await Promise.all(loops);
      expect(unexpected).toEqual([]);
      // The kill hit a stream in full flow: requests were in flight (they failed), and the loops had not stopped by themselves.
      expect(failed).toBeGreaterThan(0);
      expect(sends).toBeLessThan(MAX_SENDS);

      // What the dead gateway left: its store, and what the network already took.
      const store = openStore({ databaseUrl: location.databaseUrl, dataDir: location.dataDir });
      const atKill = await store.db
        .selectFrom('messages')
        .select(['id', 'status'])
        .where('direction', '=', 'outgoing')
        .execute()
        .finally(() => store.close());
      const statusAtKill = new Map(atKill.map((m) => [m.id, m.status]));
      const network = connectSandboxNetwork(sandbox.url);
      const takenAtKill = new Set<string>();
      try {
        for (const phone of RECEIVERS) {
          // A phone the network has sent nothing to yet is unknown to it (404).
          const now = await network.sandbox.getPhone(phone).catch(() => ({ inbox: [] }));
          for (const e of now.inbox) takenAtKill.add(e.message_id);
        }
      } finally {
        await network.close();
      }
      const notDeliveredAtKill = atKill.filter((m) => m.status !== 'delivered');
      const pendingAtKill = atKill.filter((m) => m.status === 'pending');
      const inFlightAtKill = pendingAtKill.filter((m) => takenAtKill.has(m.id));
      console.info(
        `crash test (${location.databaseUrl === null ? 'sqlite' : 'postgres'}): ${answered.size} answered 200 ` +
          `(${answeredBeforeKill} when the kill was ordered), ${failed} requests failed at the kill; store at kill: ` +
          `${atKill.length} stored, ${pendingAtKill.length} pending, ${notDeliveredAtKill.length} not yet delivered, ` +
          `${inFlightAtKill.length} pending although the network had them`,
      );

      // Durable: every 200 is in the store the killed process left behind.
      for (const id of answered.keys()) expect(statusAtKill.has(id), `${id} answered 200 but not stored`).toBe(true);
      // ...and there was still work in the queue when the process died, for the next one to do.
      expect(pendingAtKill.length).toBeGreaterThan(0);

      // The next gateway on the same store and the same network sends the rest.
      const second = await startGatewayProcess(location, env);
      gateways.push(second);
      const call2 = httpClient(second.port, agent);
      let waiting = [...answered.keys()];
      // Deadlines here are hang guards, not promises (the test is about loss, duplicates and order): the second
      // gateway drains about 1,000 messages of one device, which took 25 s with the suite loading the machine.
      await waitFor(
        async () => {
          const still: string[] = [];
          await eachLimited(waiting, 16, async (id) => {
            const res = await call2('GET', `/messages/${id}`);
            expect(res.status, `${id}: ${JSON.stringify(res.body)}`).toBe(200);
            if (res.body.data.status !== 'delivered') still.push(id);
          });
          waiting = still;
          return waiting.length;
        },
        (left) => left === 0,
        { what: 'every answered message delivered', timeoutMs: 45_000, intervalMs: 100 },
      );
      // Also whatever was committed but never answered (the kill cut the answer off) goes out.
      await waitFor(
        async () => {
          const [pending, sent] = await Promise.all([
            call2('GET', '/messages?direction=outgoing&status=pending&limit=1'),
            call2('GET', '/messages?direction=outgoing&status=sent&limit=1'),
          ]);
          return pending.body.data.length + sent.body.data.length;
        },
        (left) => left === 0,
        { what: 'nothing left pending or sent', timeoutMs: 30_000, intervalMs: 50 },
      );

      // At the phones: each stored message exactly once, and in acceptance order per phone.
      const stored = await storedIds(call2);
      const seen = new Map<string, number>();
      for (const phone of RECEIVERS) {
        const res = await call2('GET', `/sandbox/phones/${phone}`);
        expect(res.status).toBe(200);
        const ids = (res.body.data.inbox as Array<{ message_id: string }>).map((e) => e.message_id);
        expect(ids, `order at ${phone}`).toEqual([...ids].sort());
        for (const id of ids) seen.set(id, (seen.get(id) ?? 0) + 1);
      }
      const duplicates = [...seen].filter(([, count]) => count > 1);
      expect(duplicates).toEqual([]);
      for (const id of answered.keys()) expect(seen.get(id), `${id} at its phone`).toBe(1);
      expect(new Set(seen.keys())).toEqual(stored);
    } finally {
      for (const gateway of gateways) await gateway.kill();
      await agent.destroy();
      await sandbox.stop();
      await location.drop();
    }
  }, 180_000);
});
