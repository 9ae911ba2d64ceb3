// Networks kept per device (docs/networks-per-device.md, issue 22 item 10): a device paired on
// the sandbox stays there when the gateway is started again with
// GATEWAY_NETWORK=whatsapp: still paired and connected, sending on the
// sandbox, named in one start-up log line; the real network is never touched
// for it. Logged out and paired again, it pairs on its account's network.
//
// "WhatsApp" here is a TCP listener on loopback (GATEWAY_WHATSAPP_URL) that
// counts connections and closes each at once: nothing goes off the machine,
// and a connection reaching it proves a pairing went to the real network.
import { randomBytes } from 'node:crypto';
import { createServer, type Server, type Socket } from 'node:net';
import { Agent } from 'undici';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { newStoreLocation, noStoreAvailable, startGateway, type StoreLocation } from '../helpers/gateway.js';
import { BUILD_TIMEOUT_MS, ensureBuilt } from '../helpers/built.js';
import { httpClient, startGatewayProcess, type GatewayProcess } from '../helpers/gateway-process.js';
import { createPairedDevice } from '../helpers/pairing.js';
import { deviceRow } from '../helpers/rows.js';
import type { NetworkEvent } from '../../src/network/network.js';
import { waitFor } from '../helpers/wait.js';

const DEVICE_PHONE = '6281277000001';
const RECIPIENT = '6281277000002';

interface FakeWhatsApp {
  readonly url: string;
  connections(): number;
  close(): Promise<void>;
}

async function fakeWhatsApp(): Promise<FakeWhatsApp> {
  let count = 0;
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    count += 1;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `ws://127.0.0.1:${port}/ws/chat`,
    connections: () => count,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe.skipIf(noStoreAvailable)('a device keeps the network it paired on', () => {
  beforeAll(() => ensureBuilt(), BUILD_TIMEOUT_MS);
  const cleanup: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const step of cleanup.splice(0).reverse()) await step();
  });

  it('stays paired on the sandbox after a restart with GATEWAY_NETWORK=whatsapp; pairs on WhatsApp once logged out', async () => {
    const location: StoreLocation = await newStoreLocation();
    cleanup.push(() => location.drop());

    // 1. Paired on the sandbox, the gateway's network then.
    const first = await startGateway({ location });
    const paired = await createPairedDevice(first, DEVICE_PHONE, { name: 'shop front' });
    expect(paired.network).toBe('sandbox');
    await first.close({ keepStore: true });

    // 2. Started again, as an operator would, with the real network configured.
    const whatsapp = await fakeWhatsApp();
    cleanup.push(() => whatsapp.close());
    const gateway: GatewayProcess = await startGatewayProcess(location, {
      GATEWAY_NETWORK: 'whatsapp',
      GATEWAY_NETWORK_KEY: randomBytes(32).toString('base64'),
      GATEWAY_WHATSAPP_URL: whatsapp.url,
    });
    cleanup.push(() => gateway.stop());
    const agent = new Agent();
    cleanup.push(() => agent.close());
    const api = httpClient(gateway.port, agent);

    const device = await waitFor(
      async () => (await api('GET', `/devices/${paired.id}`)).body.data,
      (d) => d.connected === true,
      { what: 'the sandbox device connected again', timeoutMs: 30_000, intervalMs: 100 },
    );
    expect(device).toMatchObject({ paired_status: 'PAIRED', phone: DEVICE_PHONE, network: 'sandbox' });

    // One line names it.
    const line = await waitFor(
      () =>
        gateway
          .output()
          .split('\n')
          .find((l) => l.includes('stay on the network they were paired on')),
      (l) => l !== undefined,
      { what: 'the start-up line', timeoutMs: 10_000, intervalMs: 50 },
    );
    expect(JSON.parse(line!)).toMatchObject({
      level: 40,
      devices: [{ id: paired.id, name: 'shop front', network: 'sandbox' }],
      msg:
        '1 device(s) stay on the network they were paired on, not GATEWAY_NETWORK=whatsapp, until logged out or ' +
        `paired again: ${paired.id} "shop front" on sandbox`,
    });

    // It sends on the sandbox: the virtual phone receives it.
    const sent = await api('POST', '/messages', {
      device: DEVICE_PHONE,
      receiver: RECIPIENT,
      type: 'chat',
      params: { text: 'still on the sandbox' },
    });
    expect(sent.status, JSON.stringify(sent.body)).toBe(200);
    const messageId = sent.body.data.id as string;
    await waitFor(
      async () => (await api('GET', `/messages/${messageId}`)).body.data?.status,
      (status) => status === 'delivered' || status === 'read',
      { what: 'the message delivered on the sandbox', timeoutMs: 30_000, intervalMs: 100 },
    );
    const phone = await api('GET', `/sandbox/phones/${RECIPIENT}`);
    expect(phone.body.data.inbox.map((m: { message_id: string }) => m.message_id)).toContain(messageId);
    // The real network was never asked to connect.
    expect(whatsapp.connections()).toBe(0);

    // 3. Logged out, it pairs again on its account's network: WhatsApp here.
    const out = await api('POST', `/devices/${paired.id}/logout`);
    expect(out.status, JSON.stringify(out.body)).toBe(200);
    expect(out.body.data).toMatchObject({ paired_status: 'UNPAIRED', network: 'whatsapp' });
    // The QR request fails (the listener closes every connection); reaching it is what counts.
    await api('GET', `/devices/${paired.id}/qr?response_type=url`);
    await waitFor(
      () => whatsapp.connections(),
      (n) => n > 0,
      { what: 'the new pairing reaching WhatsApp', timeoutMs: 30_000, intervalMs: 50 },
    );
  });

  it('a device paired on WhatsApp, with the gateway started on the sandbox alone, stays paired and untouched', async () => {
    const location = await newStoreLocation();
    cleanup.push(() => location.drop());
    const first = await startGateway({ location });
    const owner = await first.app.services.accounts.findAccount('default');
    const { id } = await first.app.store.db
      .insertInto('devices')
      .values(
        deviceRow(owner.id, {
          name: 'paired on whatsapp',
          phone: DEVICE_PHONE,
          paired_status: 'PAIRED',
          network_session: 'wa1.stored-elsewhere',
          network: 'whatsapp',
        }),
      )
      .returning('id')
      .executeTakeFirstOrThrow();
    await first.close({ keepStore: true });

    // Started again on the sandbox: the session is not handed to the sandbox (which would end it).
    const gw = await startGateway({ location });
    cleanup.push(() => gw.close({ keepStore: true }));
    const seen: NetworkEvent[] = [];
    gw.app.services.connections.onEvent((deviceId, event) => {
      if (deviceId === id) seen.push(event);
    });
    await gw.app.ready();
    const dropped = await waitFor(
      () => seen.find((e) => e.type === 'disconnected'),
      (e) => e !== undefined,
      { what: 'the connection attempt', timeoutMs: 15_000 },
    );
    expect(dropped).toMatchObject({
      reason: 'paired on whatsapp, which this gateway does not run (see GATEWAY_NETWORK)',
    });
    const device = (await gw.request('GET', `/devices/${id}`)).body.data;
    expect(device).toMatchObject({
      paired_status: 'PAIRED',
      connected: false,
      network: 'whatsapp',
      phone: DEVICE_PHONE,
    });
    const row = await gw.app.store.db
      .selectFrom('devices')
      .select('network_session')
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    expect(row.network_session).toBe('wa1.stored-elsewhere');
    expect(seen.some((e) => e.type === 'logged_out')).toBe(false);
  });
});
