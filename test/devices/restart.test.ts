// docs/internals.md, Whatspie compatibility: `POST /devices/{id}/restart` drops the device's connection and
// opens it again (200 `Device restarting`); the device comes back by itself,
// from its stored session, and sends again.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { noStoreAvailable, startGateway, type TestGateway } from '../helpers/gateway.js';
import { createPairedDevice, qrText, waitForDevice } from '../helpers/pairing.js';
import { waitFor } from '../helpers/wait.js';

const build = { sandbox: { deliveryDelayMs: 5, readDelayMs: 5 } };

describe.skipIf(noStoreAvailable)('device restart', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway({ build, config: { sendIntervalMs: 0 } });
  });
  afterAll(() => gw?.close());

  it('drops and re-opens a paired device’s connection, which then sends again', async () => {
    const device = await createPairedDevice(gw, '6281555000101');
    const events: string[] = [];
    const stop = gw.app.services.connections.onEvent((id, event) => {
      if (id === device.id) events.push(event.type);
    });
    try {
      const res = await gw.request('POST', `/devices/${device.id}/restart`);
      expect(res.status).toBe(200);
      expect(res.body.status).toBe(200);
      expect(res.body.message).toBe('Device restarting');
      expect(res.body.data).toMatchObject({ id: device.id, paired_status: 'PAIRED', phone: '6281555000101' });
      // A new connection opened: the network said `connected` again, and the device is online.
      await waitFor(
        () => events,
        (seen) => seen.includes('connected'),
        { what: 'a new connection', timeoutMs: 10_000 },
      );
      const back = await waitForDevice(gw, device.id, (d) => d.connected === true, 'connected again');
      expect(back).toMatchObject({ paired_status: 'PAIRED', phone: '6281555000101' });
    } finally {
      stop();
    }
    const sent = await gw.request('POST', '/messages', {
      device: '6281555000101',
      receiver: '6281555000999',
      type: 'chat',
      params: { text: 'after restart' },
    });
    expect(sent.status, JSON.stringify(sent.body)).toBe(200);
    await waitFor(
      async () => (await gw.request('GET', `/messages/${sent.body.data.id}`)).body.data.status,
      (status) => status === 'delivered',
      { what: 'delivered after restart', timeoutMs: 10_000 },
    );
  });

  it('ends a running pairing attempt: the next QR request starts a new one', async () => {
    const created = await gw.request('POST', '/devices', { package: 'BETA', name: 'pairing restart' });
    const id = created.body.data.id as number;
    const before = await qrText(gw, id);
    const res = await gw.request('POST', `/devices/${id}/restart`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 200, message: 'Device restarting', data: { paired_status: 'UNPAIRED' } });
    // The old code belongs to the ended attempt: scanning it no longer pairs anything.
    const stale = await gw.request('POST', '/sandbox/scan', { qr: before, phone: '6281555000102' });
    expect(stale.status).toBe(400);
    expect(stale.body.message).toBe('Invalid QR code');
    const after = await qrText(gw, id);
    expect(after).not.toBe(before);
    const scan = await gw.request('POST', '/sandbox/scan', { qr: after, phone: '6281555000102' });
    expect(scan.status, JSON.stringify(scan.body)).toBe(200);
    await waitForDevice(gw, id, (d) => d.paired_status === 'PAIRED' && d.connected === true, 'paired');
  });

  it('answers 200 for a device with no connection, leaving it as it was', async () => {
    const created = await gw.request('POST', '/devices', { package: 'BETA', name: 'idle' });
    const res = await gw.request('POST', `/devices/${created.body.data.id}/restart`);
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ paired_status: 'UNPAIRED', connected: false });
  });

  it('is 403 Device suspended for a suspended device, and 404 for an unknown or foreign one', async () => {
    const created = await gw.request('POST', '/devices', { package: 'BETA', name: 'suspended' });
    await gw.app.services.devices.setStatus(created.body.data.id, 'SUSPENDED');
    const suspended = await gw.request('POST', `/devices/${created.body.data.id}/restart`);
    expect(suspended.status).toBe(403);
    expect(suspended.body).toMatchObject({ code: 403, status: 403, message: 'Device suspended' });

    const unknown = await gw.request('POST', '/devices/999999/restart');
    expect(unknown.status).toBe(404);
    expect(unknown.body.message).toBe('Device not found');

    const other = await gw.app.services.accounts.createAccount('restart-other');
    const { token } = await gw.app.services.accounts.createToken(other.id, 'other');
    const foreign = await gw.request('POST', `/devices/${created.body.data.id}/restart`, undefined, token);
    expect(foreign.status).toBe(404);
    expect(foreign.body.message).toBe('Device not found');
  });

  it('is served under /api too and needs a token', async () => {
    const created = await gw.request('POST', '/devices', { package: 'BETA', name: 'api alias' });
    const res = await gw.request('POST', `/api/devices/${created.body.data.id}/restart`);
    expect(res.status).toBe(200);
    const anonymous = await gw.request('POST', `/devices/${created.body.data.id}/restart`, undefined, null);
    expect(anonymous.status).toBe(401);
  });
});
