// Issue 22, item 3: while the store recovers, a device whose connection is
// being re-established because of the store is unavailable, not disconnected.
// PostgreSQL stops for longer than this node's lease, so the node drops its
// devices (as it must: it cannot prove it still holds them); when the server
// is back the node takes them back and reconnects them. Until the connection
// is open again, sends answer 503 with Retry-After (clients retry), never
// 400 `Device not connected` (clients give up).
//
// The network's `connected` for the reconnect is held back by the test, so the
// window between "store back" and "connection open" is as long as the test
// needs, not a race. A PostgreSQL cluster of this test's own
// (test/helpers/own-postgres.ts); the machine's shared server is never touched.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSandboxNetwork } from '../../src/network/sandbox/index.js';
import type { Network, NetworkEvent } from '../../src/network/network.js';
import { startGateway, storeKind, type TestGateway } from '../helpers/gateway.js';
import { postgresBinaries, startOwnPostgres, type OwnPostgres } from '../helpers/own-postgres.js';
import { createPairedDevice } from '../helpers/pairing.js';
import { waitFor } from '../helpers/wait.js';

const PHONE = '6281500002231';
const RECIPIENT = '6281599992231';

/** The sandbox, with a gate on the `connected` events of new connections. */
interface GatedNetwork {
  network: Network;
  /** While held, `connected` events wait; released, they are delivered in order. */
  hold(): void;
  release(): void;
  /** Connections opened so far. */
  connects(): number;
}

function gated(): GatedNetwork {
  const inner = createSandboxNetwork({ deliveryDelayMs: 5, readDelayMs: 5 });
  let held = false;
  let opened = 0;
  const waiting: Array<() => void> = [];
  return {
    network: {
      description: inner.description,
      sandbox: inner.sandbox,
      close: () => inner.close(),
      connect(options, onEvent) {
        opened += 1;
        return inner.connect(options, (event: NetworkEvent) => {
          if (held && event.type === 'connected') waiting.push(() => onEvent(event));
          else onEvent(event);
        });
      },
    },
    hold: () => void (held = true),
    release() {
      held = false;
      for (const deliver of waiting.splice(0)) deliver();
    },
    connects: () => opened,
  };
}

describe.runIf(storeKind === 'postgres' && postgresBinaries() !== null)('sends while the store recovers', () => {
  let server: OwnPostgres;
  let gw: TestGateway;
  let gate: GatedNetwork;
  let dataDir: string;
  const logLines: string[] = [];
  beforeAll(async () => {
    server = await startOwnPostgres();
    dataDir = await mkdtemp(join(tmpdir(), 'gw-recovering-'));
    gw = await startGateway({
      location: { databaseUrl: server.url, dataDir, drop: () => rm(dataDir, { recursive: true, force: true }) },
      config: { allowPrivateUrls: true, sendIntervalMs: 0 },
      build: {
        network: (gate = gated()).network,
        // A short lease, so an outage of a few seconds outlasts it; not so short that a loaded machine's slow
        // heartbeat lets it run out while the device is being paired.
        cluster: { heartbeatMs: 1_000, leaseMs: 8_000, marginMs: 1_000 },
        dispatch: { retryBaseMs: 50, retryMaxMs: 200 },
        logger: { level: 'warn', stream: { write: (line: string) => void logLines.push(line) } },
      },
    });
    try {
      await createPairedDevice(gw, PHONE);
    } catch (error) {
      // What the gateway said while pairing (a lease that ran out on a loaded machine ends the attempt).
      throw new Error(`${String(error)}\n${logLines.filter((line) => line.includes('"level":40')).join('')}`);
    }
  }, 60_000);
  afterAll(async () => {
    gate?.release();
    await gw?.close();
    await server?.destroy();
  });

  const send = (text: string) =>
    gw.request('POST', '/messages', { device: PHONE, receiver: RECIPIENT, type: 'chat', params: { text } });

  it('answers 503 with Retry-After, not 400, until the device is connected again; then 200', async () => {
    expect((await send('before')).status).toBe(200);
    const { connections } = gw.app.services;
    const deviceId = (await gw.request('GET', '/devices')).body.data.find((d: any) => d.phone === PHONE).id as number;
    const connectsBefore = gate.connects();

    gate.hold();
    await server.stop();
    // The lease runs out while the server is down: the device is dropped here.
    await waitFor(
      () => connections.isConnected(deviceId),
      (connected) => !connected,
      { what: 'the device dropped when the lease ran out', timeoutMs: 20_000 },
    );
    await server.start();
    // The store answers again and the node has taken the device back: its reconnect is under way (held at the gate).
    await waitFor(
      () => gate.connects(),
      (count) => count > connectsBefore,
      { what: 'the reconnect to start', timeoutMs: 20_000, intervalMs: 50 },
    );
    expect(connections.isConnected(deviceId)).toBe(false);

    for (let i = 0; i < 5; i++) {
      const answer = await send(`while reconnecting ${i}`);
      expect(answer.status, JSON.stringify(answer.body)).toBe(503);
      expect(answer.body).toMatchObject({ code: 503, status: 503, message: 'Service unavailable' });
      expect(answer.headers['retry-after']).toBe('5');
    }

    gate.release();
    await waitFor(
      () => connections.isConnected(deviceId),
      (connected) => connected,
      { what: 'the device connected again', timeoutMs: 10_000 },
    );
    const after = await send('after');
    expect(after.status, JSON.stringify(after.body)).toBe(200);
    // Recovered: a device that really is disconnected is told apart again.
    expect(connections.isRecovering(deviceId)).toBe(false);
  }, 90_000);
});
