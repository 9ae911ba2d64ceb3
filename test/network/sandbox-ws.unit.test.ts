/**
 * The sandbox as its own process: the shared behaviour suite through
 * startSandboxServer + connectSandboxNetwork, plus what only the wire can do
 * (the server going away and coming back, persistence on the server side).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { NetworkUnavailableError } from '../../src/network/network.js';
import { connectSandboxNetwork, startSandboxServer } from '../../src/network/sandbox/index.js';
import type { SandboxServer } from '../../src/network/sandbox/index.js';
import { pair, reconnect, Recorder } from './helpers.js';
import { sandboxSuite } from './sandbox-suite.js';

sandboxSuite('websocket', async (options) => {
  const server = await startSandboxServer({ ...options, host: '127.0.0.1', port: 0 });
  const network = connectSandboxNetwork(`ws://127.0.0.1:${server.port}`);
  return {
    network,
    close: async () => {
      await network.close();
      await server.close();
    },
  };
});

describe('websocket sandbox', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sandbox-ws-state-'));
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  async function serve(port = 0, statePath?: string): Promise<SandboxServer> {
    const server = await startSandboxServer({ port, statePath, deliveryDelayMs: 1, readDelayMs: 1 });
    cleanups.push(() => server.close());
    return server;
  }

  it('reports the network unreachable while the server is down and recovers lazily', async () => {
    const statePath = join(dir, 'state.json');
    const server = await serve(0, statePath);
    const network = connectSandboxNetwork(`ws://127.0.0.1:${server.port}`);
    cleanups.push(() => network.close());
    const a = await pair(network, 1, '4915112345678');
    const b = await pair(network, 2, '4915187654321');

    await server.close();
    await a.recorder.wait('disconnected', (e) => e.reason === 'network unreachable');
    await b.recorder.wait('disconnected', (e) => e.reason === 'network unreachable');
    await expect(a.connection.listGroups()).rejects.toBeInstanceOf(NetworkUnavailableError);

    const offline = new Recorder();
    network.connect({ deviceId: 1, session: a.session }, offline.handler);
    expect(offline.events).toHaveLength(0);
    await offline.wait('disconnected', (e) => e.reason === 'network unreachable');
    const controlError = await network.sandbox.getPhone('4915112345678').catch((err: unknown) => err);
    expect(controlError).toBeInstanceOf(Error);
    expect((controlError as Error).message).toMatch(/unreachable/);

    // The same port again, with the state the first server saved: the session is still valid.
    await serve(server.port, statePath);
    const back = await reconnect(network, 1, a.session);
    expect(back.phone).toBe('4915112345678');
    await back.connection.sendMessage({ id: 'after', to: '4917612345678', content: { type: 'chat', text: 'ok' } });
    await back.recorder.wait('message_status', (e) => e.id === 'after');
  });

  it('connects one socket for many devices and ignores a second close', async () => {
    const server = await serve();
    const network = connectSandboxNetwork(`ws://127.0.0.1:${server.port}`);
    cleanups.push(() => network.close());
    const devices = await Promise.all([1, 2, 3].map((id) => pair(network, id, `49151000${id}1234`)));
    expect(devices.map((d) => d.phone)).toEqual(['4915100011234', '4915100021234', '4915100031234']);
    await network.close();
    await network.close();
    for (const device of devices) expect(device.recorder.of('disconnected')).toHaveLength(0);
  });
});
