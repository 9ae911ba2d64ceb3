// docs/internals.md, Sending: the queue is in the store, not in a connection or a process.
// A device that goes offline keeps its queue and resumes when it reconnects;
// a gateway restarted on the same store sends what the last one accepted and
// had not sent yet. Each message reaches the phone exactly once, in order.
// The sandbox runs as its own process here, so its inboxes outlive the gateway
// (and it can be stopped and started under a gateway that keeps running).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { noStoreAvailable, startGateway, type StartOptions, type TestGateway } from '../helpers/gateway.js';
import { createPairedDevice, waitForDevice } from '../helpers/pairing.js';
import { BUILD_TIMEOUT_MS, ensureBuilt } from '../helpers/built.js';
import { startSandboxProcess, type SandboxProcess } from '../helpers/sandbox-process.js';
import { waitFor } from '../helpers/wait.js';

const build = {
  dispatch: { retryBaseMs: 50, retryMaxMs: 200 },
  connections: { reconnectBaseMs: 20, reconnectMaxMs: 200 },
};

interface InboxEntry {
  message_id: string;
  received_at: string;
}

describe.skipIf(noStoreAvailable)('the outbound queue across drops and restarts', () => {
  beforeAll(() => ensureBuilt(), BUILD_TIMEOUT_MS);
  const gateways: TestGateway[] = [];
  const sandboxes: SandboxProcess[] = [];
  const dirs: string[] = [];
  afterEach(async () => {
    // Gateways first (they hold sockets to the sandboxes), then the sandboxes, then the stores and files.
    const open = gateways.splice(0);
    for (const gw of open) await gw.close({ keepStore: true });
    await Promise.all(sandboxes.splice(0).map((s) => s.stop()));
    await Promise.all([...new Set(open.map((gw) => gw.location))].map((location) => location.drop()));
    await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
  });

  async function sandbox(args: string[] = []): Promise<SandboxProcess> {
    const started = await startSandboxProcess(args);
    sandboxes.push(started);
    return started;
  }
  async function gateway(options: StartOptions): Promise<TestGateway> {
    const gw = await startGateway({ build, ...options });
    gateways.push(gw);
    return gw;
  }
  async function stopSandbox(s: SandboxProcess): Promise<void> {
    await s.stop();
    sandboxes.splice(sandboxes.indexOf(s), 1);
  }

  const helpers = (gw: TestGateway) => ({
    /** Sends `count` chat messages at once; their ids in acceptance order. */
    burst: async (device: string, receiver: string, count: number) => {
      const answers = await Promise.all(
        Array.from({ length: count }, (_, i) =>
          gw.request('POST', '/messages', { device, receiver, type: 'chat', params: { text: `q${i}` } }),
        ),
      );
      for (const a of answers) expect(a.status, JSON.stringify(a.body)).toBe(200);
      return answers.map((a) => a.body.data.id as string).sort();
    },
    status: async (id: string) => (await gw.request('GET', `/messages/${id}`)).body.data.status as string,
    inbox: async (phone: string) => {
      const res = await gw.request('GET', `/sandbox/phones/${phone}`);
      return res.status === 200 ? (res.body.data.inbox as InboxEntry[]) : [];
    },
  });

  it('keeps a device’s queue while it is offline and sends it, once and in order, when it is back', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'gw-queue-'));
    dirs.push(dir);
    const state = join(dir, 'sandbox-state.json');
    const first = await sandbox(['--state', state]);
    const gw = await gateway({ config: { network: `sandbox+${first.url}`, sendIntervalMs: 300 } });
    const h = helpers(gw);
    const device = await createPairedDevice(gw, '6281800005101');
    const receiver = '6281899995101';

    const ids = await h.burst(device.phone, receiver, 5);
    // The first leaves at once; the next one is 300 ms away when the network goes.
    const before = await waitFor(
      () => h.inbox(receiver),
      (entries) => entries.length >= 1,
      { what: 'the first message at the phone' },
    );
    await stopSandbox(first);
    expect(before.map((e) => e.message_id)).toEqual([ids[0]]);

    await waitForDevice(gw, device.id, (d) => d.connected === false, 'offline');
    const offline = (await gw.request('GET', `/devices/${device.id}`)).body.data;
    expect(offline.paired_status).toBe('PAIRED');
    const refused = await gw.request('POST', '/messages', {
      device: device.phone,
      receiver,
      type: 'chat',
      params: { text: 'while offline' },
    });
    expect(refused.status).toBe(400);
    expect(refused.body).toEqual({ code: 400, status: 400, message: 'Device not connected' });

    await waitFor(
      () => h.status(ids[0]!),
      (s) => s === 'delivered',
      { what: 'the first delivered' },
    );
    // Longer than one send interval with the device offline: nothing moves, nothing fails.
    await new Promise((resolve) => setTimeout(resolve, 400));
    for (const id of ids.slice(1)) expect(await h.status(id)).toBe('pending');

    const second = await sandbox(['--port', String(first.port), '--state', state]);
    expect(second.port).toBe(first.port);
    await waitForDevice(gw, device.id, (d) => d.connected === true, 'connected again');
    for (const id of ids) {
      await waitFor(
        () => h.status(id),
        (s) => s === 'delivered',
        { what: `${id} delivered`, timeoutMs: 10_000 },
      );
    }
    // This sandbox process started with an empty inbox: it holds exactly what was queued at the drop.
    const after = await h.inbox(receiver);
    expect(after.map((e) => e.message_id)).toEqual(ids.slice(1));
    expect([...before, ...after].map((e) => e.message_id)).toEqual(ids);
  });

  it('a gateway restarted on the same store sends what the last one left pending, once each, in order', async () => {
    const net = await sandbox();
    const network = `sandbox+${net.url}`;
    const gw1 = await gateway({ config: { network, sendIntervalMs: 10_000 } });
    const h1 = helpers(gw1);
    const device = await createPairedDevice(gw1, '6281800005201');
    const receiver = '6281899995201';

    const ids = await h1.burst(device.phone, receiver, 6);
    await waitFor(
      () => h1.status(ids[0]!),
      (s) => s === 'delivered',
      { what: 'the first delivered' },
    );
    for (const id of ids.slice(1)) expect(await h1.status(id)).toBe('pending');
    await gw1.close({ keepStore: true });

    const gw2 = await gateway({ location: gw1.location, config: { network, sendIntervalMs: 0 } });
    const h2 = helpers(gw2);
    await gw2.app.ready();
    for (const id of ids) {
      await waitFor(
        () => h2.status(id),
        (s) => s === 'delivered',
        { what: `${id} delivered after the restart`, timeoutMs: 10_000 },
      );
    }
    // The sandbox process kept its inbox across the gateway restart: every message once, in acceptance order.
    expect((await h2.inbox(receiver)).map((e) => e.message_id)).toEqual(ids);
  });
});
