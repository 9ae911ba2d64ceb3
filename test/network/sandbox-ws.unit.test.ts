/**
 * The sandbox as its own process: the shared behaviour suite through
 * startSandboxServer + connectSandboxNetwork, plus what only the wire can do
 * (the server going away and coming back, persistence on the server side,
 * media in bounded chunk frames sent no faster than the server reads them).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { WebSocketServer } from 'ws';
import { NetworkUnavailableError, type MediaSource } from '../../src/network/network.js';
import { connectSandboxNetwork, startSandboxServer } from '../../src/network/sandbox/index.js';
import type { SandboxServer } from '../../src/network/sandbox/index.js';
import { WIRE_CHUNK_BYTES } from '../../src/network/sandbox/ws-protocol.js';
import { BytesSource, EndlessSource, MiB, pair, reconnect, Recorder, sleep } from './helpers.js';
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

  it('answers GET /health with its connections and every session opened twice (closed as replaced)', async () => {
    const server = await serve();
    const health = async () => {
      const res = await fetch(`http://127.0.0.1:${server.port}/health`);
      expect(res.status).toBe(200);
      return (await res.json()) as { status: string; connections: number; replaced_total: number; replaced: object };
    };
    const first = connectSandboxNetwork(`ws://127.0.0.1:${server.port}`);
    const second = connectSandboxNetwork(`ws://127.0.0.1:${server.port}`);
    cleanups.push(
      () => first.close(),
      () => second.close(),
    );
    const a = await pair(first, 1, '4915112345678');
    await pair(first, 2, '4915187654321');
    expect(await health()).toEqual({ status: 'ok', connections: 2, replaced_total: 0, replaced: {} });

    // A second client (another gateway node) opens the same session: the older connection is closed as replaced.
    await reconnect(second, 1, a.session);
    await a.recorder.wait('disconnected', (e) => e.reason === 'replaced');
    expect(await health()).toEqual({
      status: 'ok',
      connections: 2,
      replaced_total: 1,
      replaced: { '4915112345678': 1 },
    });

    expect((await fetch(`http://127.0.0.1:${server.port}/other`)).status).toBe(404);
    expect((await fetch(`http://127.0.0.1:${server.port}/health`, { method: 'POST' })).status).toBe(405);
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

  it('sends media in chunk frames no larger than a wire chunk, and no faster than the server reads them', async () => {
    // A stand-in server that takes a few chunks and then stops reading its socket.
    const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    await once(wss, 'listening');
    cleanups.push(async () => {
      for (const client of wss.clients) client.terminate();
      await new Promise((resolve) => wss.close(resolve));
    });
    let chunkFrames = 0;
    let largestChunkFrame = 0;
    wss.on('connection', (socket) => {
      socket.on('message', (data: Buffer) => {
        const frame = JSON.parse(String(data)) as { t: string; cid: number };
        if (frame.t === 'connect') {
          const event = { type: 'connected', phone: '4915112345678' };
          socket.send(JSON.stringify({ t: 'event', cid: frame.cid, event }));
        }
        if (frame.t !== 'chunk') return;
        chunkFrames += 1;
        largestChunkFrame = Math.max(largestChunkFrame, data.length);
        if (chunkFrames === 4) socket.pause();
      });
    });
    const network = connectSandboxNetwork(`ws://127.0.0.1:${(wss.address() as AddressInfo).port}`);
    cleanups.push(() => network.close());
    const recorder = new Recorder();
    const connection = network.connect({ deviceId: 1, session: 'a session' }, recorder.handler);
    await recorder.wait('connected');

    // Far more than socket buffers hold: a sender that did not wait would pull all of it at once.
    const source = new EndlessSource(1024 * MiB);
    const content = { type: 'file', media: source, mimetype: 'application/pdf', fileName: 'f.pdf' } as const;
    const sending = connection.sendMessage({ id: 'm', to: '4917612345678', content }).catch((err: unknown) => err);
    // Wait until the sender has stopped pulling (unchanged for half a second), then look at how far it got.
    let seen = -1;
    let still = 0;
    for (let i = 0; i < 200 && still < 5; i++) {
      await sleep(100);
      still = source.pulled === seen && chunkFrames >= 4 ? still + 1 : 0;
      seen = source.pulled;
    }
    expect(still).toBe(5);
    expect(source.pulled).toBeLessThan(64 * MiB);
    expect(largestChunkFrame).toBeGreaterThan(0);
    expect(largestChunkFrame).toBeLessThanOrEqual((WIRE_CHUNK_BYTES / 3) * 4 + 100);

    // The server goes away mid-media: the send fails as the network being unreachable.
    for (const client of wss.clients) client.terminate();
    expect(await sending).toBeInstanceOf(NetworkUnavailableError);
  });

  it('refuses media whose bytes do not match the size it declared', async () => {
    const server = await serve();
    const network = connectSandboxNetwork(`ws://127.0.0.1:${server.port}`);
    cleanups.push(() => network.close());
    const device = await pair(network, 1, '4915112345678');
    const lying = (size: number): MediaSource => ({ size, open: () => new BytesSource(new Uint8Array(5)).open() });
    const send = (id: string, media: MediaSource) =>
      device.connection.sendMessage({
        id,
        to: '4917612345678',
        content: { type: 'audio', media, mimetype: 'audio/ogg' },
      });
    await expect(send('long', lying(3))).rejects.toThrow('more media bytes than the message declared');
    await expect(send('short', lying(10))).rejects.toThrow('fewer media bytes than the message declared');
    await send('right', lying(5));
    await device.recorder.wait('message_status', (e) => e.id === 'right' && e.status === 'delivered');
    expect((await network.sandbox.getPhone('4917612345678')).inbox.map((e) => e.message_id)).toEqual(['right']);
  });
});
