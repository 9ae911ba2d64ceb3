// The pairing flow against the sandbox running as its own process, over WebSocket.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { noStoreAvailable, startGateway, type TestGateway } from '../helpers/gateway.js';
import { createPairedDevice, qrText, waitForDevice } from '../helpers/pairing.js';
import { BUILD_TIMEOUT_MS, ensureBuilt } from '../helpers/built.js';
import { startSandboxProcess, type SandboxProcess } from '../helpers/sandbox-process.js';

const fast = { connections: { reconnectBaseMs: 50, reconnectMaxMs: 300 } };

describe.skipIf(noStoreAvailable)('pairing with the sandbox as its own process', () => {
  beforeAll(() => ensureBuilt(), BUILD_TIMEOUT_MS);
  const cleanup: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const step of cleanup.splice(0).reverse()) await step();
  });

  async function sandbox(args: string[] = []): Promise<SandboxProcess> {
    const proc = await startSandboxProcess(args);
    cleanup.push(() => proc.stop());
    return proc;
  }
  async function gateway(url: string, options: Parameters<typeof startGateway>[0] = {}): Promise<TestGateway> {
    const gw = await startGateway({
      build: fast,
      ...options,
      config: { network: `sandbox+${url}`, ...options.config },
    });
    cleanup.push(() => gw.close());
    return gw;
  }

  it('pairs, drops and reconnects, and survives a gateway restart', async () => {
    const proc = await sandbox();
    const gw = await gateway(proc.url);
    const device = await createPairedDevice(gw, '6289000000001');
    expect(device.phone).toBe('6289000000001');

    await gw.request('POST', `/sandbox/devices/${device.id}/disconnect`, {});
    await waitForDevice(gw, device.id, (d) => d.connected === true && d.paired_status === 'PAIRED');

    await gw.close({ keepStore: true });
    const again = await gateway(proc.url, { location: gw.location });
    await waitForDevice(again, device.id, (d) => d.connected === true, 'reconnected after gateway restart');
    expect((await again.request('GET', `/devices/${device.id}/qr?response_type=url`)).body).toEqual({
      code: 200,
      status: 200,
      message: 'Device connected',
    });
  });

  it('refuses a rotated-out code over the wire too', async () => {
    const proc = await sandbox(['--qr-rotate-ms', '60']);
    const gw = await gateway(proc.url);
    const id = (await gw.request('POST', '/devices', { package: 'BETA', name: 'ws' })).body.data.id;
    const first = await qrText(gw, id);
    await new Promise((resolve) => setTimeout(resolve, 150));
    const res = await gw.request('POST', '/sandbox/scan', { qr: first, phone: '6289000000002' });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ code: 400, status: 400, message: 'Invalid QR code' });
  });

  it('reconnects when the sandbox process comes back after a restart', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'gw-sandbox-state-'));
    cleanup.push(() => rm(dir, { recursive: true, force: true }));
    const state = join(dir, 'state.json');
    const first = await startSandboxProcess(['--state', state]);
    const gw = await gateway(first.url);
    const device = await createPairedDevice(gw, '6289000000003');
    await first.stop();
    await waitForDevice(gw, device.id, (d) => d.connected === false, 'offline while the sandbox is down');
    expect((await gw.request('GET', `/devices/${device.id}`)).body.data.paired_status).toBe('PAIRED');
    const second = await sandbox(['--state', state, '--port', String(first.port)]);
    expect(second.port).toBe(first.port);
    await waitForDevice(gw, device.id, (d) => d.connected === true, 'back when the sandbox is back');
  });
});
