// What the end-to-end suites against the WhatsApp stand-in share (docs/standin.md): the stand-in as its own
// process, a store, a webhook receiver, a local media server, the built gateway on the whatsapp network pointed at
// the stand-in, and the look-ups the tests poll. Each suite keeps one world for its file; `startGateway` may be
// called again after `gateway.stop()` (a restart), and `api` then talks to the new process.
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { Agent } from 'undici';
import { expect } from 'vitest';
import { startReceiver, type Receiver } from '../events/helpers.js';
import { decodeQrDataUrl } from '../helpers/qr.js';
import { ensureBuilt } from '../helpers/built.js';
import { newStoreLocation, type StoreLocation } from '../helpers/gateway.js';
import { httpClient, startGatewayProcess, type GatewayProcess } from '../helpers/gateway-process.js';
import { startStandinProcess, type StandinProcess } from '../../standin/spawn.js';
import { waitFor } from '../helpers/wait.js';

export const PNG = readFileSync(new URL('../fixtures/media/tiny.png', import.meta.url));
export const WAIT = { timeoutMs: 20_000, intervalMs: 50 };

export interface StandinWorld {
  readonly standin: StandinProcess;
  readonly location: StoreLocation;
  readonly hooks: Receiver;
  /** A PNG served by a local HTTP server, for image sends. */
  readonly filesUrl: string;
  gateway: GatewayProcess | undefined;
  api: ReturnType<typeof httpClient>;
  /** Starts the built gateway against the stand-in, with `env` added to its settings. */
  startGateway(env?: Record<string, string>): Promise<void>;
  device(id: number): Promise<any>;
  phone(number: string): Promise<any>;
  message(id: string): Promise<any>;
  /** Waits until the device is paired and connected; answers its object. */
  connected(id: number): Promise<any>;
  /**
   * A new device (`name`), its events sent to the receiver unless `webhook` is false, whose QR `phone` scans through
   * the stand-in; answers its id once it is paired and connected.
   */
  pairedDevice(name: string, phone: string, options?: { webhook?: boolean }): Promise<number>;
  stop(): Promise<void>;
}

export async function startStandinWorld(networkKeyByte: number): Promise<StandinWorld> {
  ensureBuilt();
  const [standin, location, hooks] = await Promise.all([startStandinProcess(), newStoreLocation(), startReceiver()]);
  const files: Server = createServer((_req, res) => res.writeHead(200, { 'content-type': 'image/png' }).end(PNG));
  await new Promise<void>((resolve) => files.listen(0, '127.0.0.1', resolve));
  const agent = new Agent();
  const notStarted = () => Promise.reject(new Error('the gateway is not started'));
  const world: StandinWorld = {
    standin,
    location,
    hooks,
    filesUrl: `http://127.0.0.1:${(files.address() as { port: number }).port}/tiny.png`,
    gateway: undefined,
    api: notStarted,
    async startGateway(env = {}) {
      world.gateway = await startGatewayProcess(
        location,
        {
          GATEWAY_NETWORK: 'whatsapp',
          GATEWAY_NETWORK_KEY: Buffer.alloc(32, networkKeyByte).toString('base64'),
          GATEWAY_WHATSAPP_URL: standin.ws,
          GATEWAY_WHATSAPP_ROOT_KEY: standin.root_key,
          GATEWAY_ALLOW_PRIVATE_URLS: 'true',
          GATEWAY_SEND_INTERVAL_MS: '0',
          NODE_EXTRA_CA_CERTS: standin.ca,
          ...env,
        },
        { built: true },
      );
      world.api = httpClient(world.gateway.port, agent);
    },
    device: async (id) => (await world.api('GET', `/devices/${id}`)).body.data,
    phone: async (number) => (await standin.call('GET', `/control/phones/${number}`)).body,
    message: async (id) => (await world.api('GET', `/messages/${id}`)).body.data,
    connected: (id) =>
      waitFor(
        () => world.device(id),
        (d) => d.paired_status === 'PAIRED' && d.connected === true,
        { ...WAIT, what: 'paired and connected' },
      ),
    async pairedDevice(name, phone, { webhook = true } = {}) {
      const created = await world.api('POST', '/devices', { package: 'BUSINESS', name });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      const id = created.body.data.id as number;
      if (webhook) {
        const patched = await world.api('PATCH', `/devices/${id}`, { webhook_url: hooks.url });
        expect(patched.status, JSON.stringify(patched.body)).toBe(200);
      }
      const qr = await waitFor(
        () => world.api('GET', `/devices/${id}/qr?response_type=url`),
        (r) => r.status === 200 && !!r.body.data?.qr,
        { ...WAIT, what: 'a QR code' },
      );
      const scanned = await standin.call('POST', '/control/scan', { qr: decodeQrDataUrl(qr.body.data.qr), phone });
      expect(scanned.status, JSON.stringify(scanned.body)).toBe(200);
      await world.connected(id);
      return id;
    },
    async stop() {
      await world.gateway?.stop();
      await standin.stop();
      await hooks.close();
      await new Promise((resolve) => files.close(resolve));
      await agent.close();
      await location.drop();
    },
  };
  return world;
}
