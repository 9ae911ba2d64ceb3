// Issue 12: where WhatsApp cannot be reached (as on every machine that runs
// these tests), the real connector, with the real Baileys socket, answers a QR
// request with 500 "QR code generation failed" within its wait, keeps a paired
// device PAIRED, and retries with backoff, never in a tight loop.
// "WhatsApp" here is a TCP server on 127.0.0.1 that drops every connection.
import { createServer, type Server } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeClock, systemClock } from '../../../src/clock.js';
import { SqlNetworkStateStore } from '../../../src/devices/network-state.js';
import { loadSessionAuth } from '../../../src/network/whatsapp/auth-state.js';
import { Sealer } from '../../../src/network/whatsapp/seal.js';
import { openStore } from '../../../src/store/store.js';
import { newStoreLocation, noStoreAvailable, startGateway, type TestGateway } from '../../helpers/gateway.js';
import { waitFor } from '../../helpers/wait.js';

const KEYS = { current: Buffer.alloc(32, 0x17), previous: [] };

describe.skipIf(noStoreAvailable)('WhatsApp unreachable', () => {
  let server: Server;
  let url: string;
  let connections = 0;
  const open: TestGateway[] = [];

  beforeEach(async () => {
    connections = 0;
    server = createServer((socket) => {
      connections += 1;
      socket.destroy();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    if (address === null || typeof address === 'string') throw new Error('no port');
    url = `ws://127.0.0.1:${address.port}/ws/chat`;
  });
  afterEach(async () => {
    await Promise.all(open.splice(0).map((gw) => gw.close()));
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('a QR request answers 500 QR code generation failed within its wait, and the attempt is not retried', async () => {
    const gw = await startGateway({
      config: { network: 'whatsapp', networkKey: KEYS, whatsappUrl: url },
      build: { connections: { qrWaitMs: 8_000 } },
    });
    open.push(gw);
    const id = (await gw.request('POST', '/devices', { package: 'BETA', name: 'wa' })).body.data.id as number;
    const started = Date.now();
    const res = await gw.request('GET', `/devices/${id}/qr?response_type=url`);
    expect(res.status).toBe(500);
    expect(res.body).toMatchObject({ code: 500, status: 500, message: 'QR code generation failed' });
    expect(Date.now() - started).toBeLessThan(9_000);
    const code = await gw.request('POST', `/devices/${id}/pairing-code`, { phone: '4915100000009' });
    expect(code.status).toBe(500);
    expect(code.body).toMatchObject({ code: 500, status: 500, message: 'Pairing code generation failed' });
    // A failed pairing attempt ends; nothing keeps knocking.
    const after = connections;
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(connections - after).toBeLessThanOrEqual(1);
    expect(connections).toBeGreaterThanOrEqual(1);
    // No state of the failed attempts is left behind.
    await waitFor(
      async () => (await gw.app.store.db.selectFrom('network_auth').selectAll().execute()).length,
      (n) => n === 0,
      { what: 'no pairing state left' },
    );
  });

  it('a paired device stays PAIRED, offline, and reconnects with backoff', async () => {
    const location = await newStoreLocation();
    // A device paired earlier: its sealed session in the store, as the connector left it.
    const seed = await startGateway({ location, config: { network: 'sandbox' } });
    const id = (await seed.request('POST', '/devices', { package: 'BETA', name: 'wa' })).body.data.id as number;
    await seed.close({ keepStore: true });
    const store = openStore({ databaseUrl: location.databaseUrl, dataDir: location.dataDir });
    const session = 'wa1.11111111-2222-3333-4444-555555555555';
    const writer = await new SqlNetworkStateStore(store, systemClock).claim(session, { create: true });
    const auth = await loadSessionAuth(writer!, new Sealer(KEYS), { fresh: true });
    auth.state.creds.me = { id: '4915100000009:3@s.whatsapp.net' };
    await auth.saveCreds();
    await store.db
      .updateTable('devices')
      .set({ paired_status: 'PAIRED', network_session: session, phone: '4915100000009' })
      .where('id', '=', id)
      .execute();
    await store.close();

    // The reconnect waits are timers of the gateway's clock, which only the test moves: each wait is known in
    // advance (a fixed jitter: half the ceiling and half of the other half, the ceiling doubling from 300 ms).
    const clock = new FakeClock(Date.now());
    const gw = await startGateway({
      location,
      clock,
      config: { network: 'whatsapp', networkKey: KEYS, whatsappUrl: url },
      build: {
        connections: { reconnectBaseMs: 300, reconnectMaxMs: 5_000, reconnectJitter: () => 0.5 },
        // No webhook poll among the clock's timers while the test reads them.
        webhooks: { pollIntervalMs: 3_600_000 },
      },
    });
    open.push(gw);
    await gw.app.ready();
    await waitFor(
      () => connections,
      (n) => n >= 1,
      { what: 'the first connection attempt', timeoutMs: 15_000 },
    );
    // Backoff, not a loop: after each dropped attempt the next one waits for its timer, and comes only when the
    // clock reaches it.
    let from = clock.now();
    for (const wait of [225, 450, 900, 1_800]) {
      const due = from + wait;
      await waitFor(
        () => clock.dueTimes,
        (times) => times.includes(due),
        { what: `the next attempt scheduled at +${wait} ms`, timeoutMs: 15_000 },
      );
      const before = connections;
      clock.set(due - 1);
      expect(clock.dueTimes, `wait of ${wait} ms not over a millisecond early`).toContain(due);
      expect(connections, 'no attempt while the clock stands still').toBe(before);
      clock.set(due);
      await waitFor(
        () => connections,
        (n) => n > before,
        { what: `the attempt after ${wait} ms`, timeoutMs: 15_000 },
      );
      from = due;
    }
    const device = (await gw.request('GET', `/devices/${id}`)).body.data;
    expect(device).toMatchObject({ paired_status: 'PAIRED', connected: false });
    expect((await gw.request('GET', `/devices/${id}`)).body.data.paired_status).toBe('PAIRED');
    // The session is intact for when the network is back.
    const rows = await gw.app.store.db.selectFrom('network_auth').select('session_id').execute();
    expect(rows.map((r) => r.session_id)).toEqual([session]);
  });
});
