// Spec 4.4, 3.1; docs/internals.md, Devices and pairing; The network seam and the sandbox: pairing by QR through the sandbox network.
import { afterEach, describe, expect, it } from 'vitest';
import { noStoreAvailable, startGateway, type TestGateway } from '../helpers/gateway.js';
import { createPairedDevice, qrText, waitForDevice } from '../helpers/pairing.js';
import { decodeQrDataUrl } from '../helpers/qr.js';
import { waitFor } from '../helpers/wait.js';

const fast = { sandbox: { qrRotateMs: 20_000 }, connections: { reconnectBaseMs: 20, reconnectMaxMs: 200 } };

describe.skipIf(noStoreAvailable)('pairing by QR', () => {
  const open: TestGateway[] = [];
  const start = async (options: Parameters<typeof startGateway>[0] = {}) => {
    // Private URLs allowed: some tests point the webhook at a dead loopback port just to have events recorded.
    const gw = await startGateway({ build: fast, ...options, config: { allowPrivateUrls: true, ...options.config } });
    open.push(gw);
    return gw;
  };
  afterEach(async () => {
    await Promise.all(open.splice(0).map((gw) => gw.close()));
  });

  const newDevice = async (gw: TestGateway, body: Record<string, unknown> = {}) =>
    (await gw.request('POST', '/devices', { package: 'BETA', name: 'pair me', ...body })).body.data.id as number;

  it('answers a real, scannable PNG QR; scanning it pairs the device', async () => {
    const gw = await start();
    const id = await newDevice(gw);
    const res = await gw.request('GET', `/devices/${id}/qr?response_type=url`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      code: 200,
      status: 200,
      message: 'QR code generated',
      data: {
        qr: expect.stringMatching(/^data:image\/png;base64,/),
        // When this attempt's pairing window closes (the dashboard counts down to it).
        expires_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      },
    });
    const text = decodeQrDataUrl(res.body.data.qr);
    expect(text).toMatch(/^2@/);

    // Asking again during the same attempt gives the same current code.
    expect(await qrText(gw, id)).toBe(text);

    const scan = await gw.request('POST', '/sandbox/scan', { qr: text, phone: '6281111111111' });
    expect(scan.body).toEqual({
      code: 200,
      status: 200,
      message: 'QR code scanned',
      data: { device_phone: '6281111111111' },
    });
    const device = await waitForDevice(gw, id, (d) => d.paired_status === 'PAIRED' && d.connected);
    expect(device.phone).toBe('6281111111111');
    expect(device.server).toEqual({ name: 'test-node', status: 'ACTIVE' });

    const again = await gw.request('GET', `/devices/${id}/qr?response_type=url`);
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ code: 200, status: 200, message: 'Device connected' });
  });

  it('rotates the code; a rotated-out code is refused with 400 Invalid QR code', async () => {
    // The first code lives 250 ms, the next one 10 minutes: the rotation is seen, and the code read after it is
    // still the current one when its scan arrives, however slowly a loaded machine decodes the PNG.
    const gw = await start({ build: { ...fast, sandbox: { qrRotateMs: [250, 600_000] } } });
    const id = await newDevice(gw);
    const first = await qrText(gw, id);
    const current = await waitFor(
      () => qrText(gw, id),
      (text) => text !== first,
      { what: 'a rotated QR' },
    );
    const stale = await gw.request('POST', '/sandbox/scan', { qr: first, phone: '6281111111112' });
    expect(stale.status).toBe(400);
    expect(stale.body).toEqual({ code: 400, status: 400, message: 'Invalid QR code' });
    expect(await qrText(gw, id)).toBe(current);
    const ok = await gw.request('POST', '/sandbox/scan', { qr: current, phone: '6281111111112' });
    expect(ok.status).toBe(200);
    expect(ok.body.data).toEqual({ device_phone: '6281111111112' });
    await waitForDevice(gw, id, (d) => d.paired_status === 'PAIRED');
  });

  it('expires an unscanned attempt after the pairing window; the next QR request starts a new one', async () => {
    const gw = await start({ config: { pairingWindowS: 1 } });
    const id = await newDevice(gw);
    await gw.request('PATCH', `/devices/${id}`, { webhook_url: 'http://127.0.0.1:9/hook' });
    const first = await qrText(gw, id);
    await waitForDevice(gw, id, (d) => d.paired_status === 'EXPIRED', 'EXPIRED');
    const expiredScan = await gw.request('POST', '/sandbox/scan', { qr: first, phone: '6281111111113' });
    expect(expiredScan.body.message).toBe('Invalid QR code');
    const events = await gw.app.store.db
      .selectFrom('webhook_events')
      .select(['type', 'payload'])
      .where('device_id', '=', id)
      .execute();
    expect(events.map((e) => e.type)).toEqual(['device.qr_expired']);
    expect(JSON.parse(events[0]!.payload)).toMatchObject({
      type: 'device.qr_expired',
      device: { id, phone: null },
      data: { paired_status: 'EXPIRED' },
    });

    const fresh = await qrText(gw, id);
    expect(fresh).not.toBe(first);
    expect((await gw.request('GET', `/devices/${id}`)).body.data.paired_status).toBe('UNPAIRED');
    await gw.request('POST', '/sandbox/scan', { qr: fresh, phone: '6281111111113' });
    await waitForDevice(gw, id, (d) => d.paired_status === 'PAIRED');
  });

  it('refuses pairing from another number when the device was created for one', async () => {
    const gw = await start();
    const id = await newDevice(gw, { phone: '6282222222222' });
    const text = await qrText(gw, id);
    const wrong = await gw.request('POST', '/sandbox/scan', { qr: text, phone: '6283333333333' });
    expect(wrong.status).toBe(400);
    expect(wrong.body.message).toBe('Phone number mismatch');
    expect((await gw.request('GET', `/devices/${id}`)).body.data.paired_status).toBe('UNPAIRED');
    const right = await gw.request('POST', '/sandbox/scan', { qr: text, phone: '6282222222222' });
    expect(right.status).toBe(200);
    const device = await waitForDevice(gw, id, (d) => d.paired_status === 'PAIRED');
    expect(device.phone).toBe('6282222222222');
  });

  it('records device.paired for a device with a webhook URL, in the same transaction as PAIRED', async () => {
    const gw = await start();
    const id = await newDevice(gw);
    await gw.request('PATCH', `/devices/${id}`, { webhook_url: 'http://127.0.0.1:9/hook' });
    await gw.request('POST', '/sandbox/scan', { qr: await qrText(gw, id), phone: '6284444444444' });
    await waitForDevice(gw, id, (d) => d.paired_status === 'PAIRED');
    const events = await gw.app.store.db.selectFrom('webhook_events').selectAll().where('device_id', '=', id).execute();
    expect(events).toHaveLength(1);
    expect(JSON.parse(events[0]!.payload)).toEqual({
      id: events[0]!.id,
      type: 'device.paired',
      device: { id, phone: '6284444444444' },
      created_at: expect.any(String),
      data: { paired_status: 'PAIRED', phone: '6284444444444' },
    });
  });

  it('logs out through the API: UNPAIRED, session gone, a new QR pairs again', async () => {
    const gw = await start();
    const device = await createPairedDevice(gw, '6285555555555');
    const res = await gw.request('POST', `/devices/${device.id}/logout`);
    expect(res.status).toBe(200);
    expect(res.body.status).toBe(200);
    expect(res.body.message).toBe('Device logged out');
    expect(res.body.data).toMatchObject({ paired_status: 'UNPAIRED', connected: false, phone: null });
    const row = await gw.app.store.db
      .selectFrom('devices')
      .select('network_session')
      .where('id', '=', device.id)
      .executeTakeFirst();
    expect(row?.network_session).toBeNull();
    await gw.request('POST', '/sandbox/scan', { qr: await qrText(gw, device.id), phone: '6285555555555' });
    await waitForDevice(gw, device.id, (d) => d.paired_status === 'PAIRED' && d.connected);
  });

  it('a logout from the phone returns the device to UNPAIRED and records device.disconnected', async () => {
    const gw = await start();
    const device = await createPairedDevice(gw, '6286666666666');
    await gw.request('PATCH', `/devices/${device.id}`, { webhook_url: 'http://127.0.0.1:9/hook' });
    const res = await gw.request('POST', `/sandbox/devices/${device.id}/disconnect`, { logout: true });
    expect(res.body).toEqual({ code: 200, status: 200, message: 'Device logged out from the phone', data: null });
    const after = await waitForDevice(gw, device.id, (d) => d.paired_status === 'UNPAIRED');
    expect(after.connected).toBe(false);
    const events = await gw.app.store.db
      .selectFrom('webhook_events')
      .select(['type', 'payload'])
      .where('device_id', '=', device.id)
      .execute();
    expect(events.map((e) => e.type)).toEqual(['device.disconnected']);
    expect(JSON.parse(events[0]!.payload)).toMatchObject({
      device: { phone: '6286666666666' },
      data: { paired_status: 'UNPAIRED' },
    });
  });

  it('a dropped connection stays PAIRED, shows connected:false, and comes back by itself', async () => {
    const gw = await start();
    const device = await createPairedDevice(gw, '6287777777777');
    const seen: boolean[] = [];
    const stop = gw.app.services.connections.onEvent((id, event) => {
      if (id === device.id && (event.type === 'disconnected' || event.type === 'connected'))
        seen.push(event.type === 'connected');
    });
    const res = await gw.request('POST', `/sandbox/devices/${device.id}/disconnect`, {});
    expect(res.body).toEqual({ code: 200, status: 200, message: 'Connection dropped', data: null });
    await waitFor(
      () => seen,
      (s) => s.length >= 2,
      { what: 'drop then reconnect' },
    );
    stop();
    expect(seen.slice(0, 2)).toEqual([false, true]);
    const back = await waitForDevice(gw, device.id, (d) => d.connected === true);
    expect(back.paired_status).toBe('PAIRED');
  });

  it('reconnects paired devices after a restart of the gateway', async () => {
    const gw = await start();
    const a = await createPairedDevice(gw, '6288888888881');
    const b = await createPairedDevice(gw, '6288888888882');
    await gw.close({ keepStore: true });
    open.splice(open.indexOf(gw), 1);
    const again = await start({ location: gw.location });
    for (const id of [a.id, b.id]) {
      const device = await waitForDevice(again, id, (d) => d.connected === true, 'reconnected after restart');
      expect(device.paired_status).toBe('PAIRED');
    }
  });

  it('answers 400 Validation failed for a missing or unsupported response_type', async () => {
    const gw = await start();
    const id = await newDevice(gw);
    for (const query of ['', '?response_type=', '?response_type=image', '?response_type=URL']) {
      const res = await gw.request('GET', `/devices/${id}/qr${query}`);
      expect(res.status, query).toBe(400);
      expect(res.body.message).toBe('Validation failed');
      expect(res.body.errors.response_type).toBeDefined();
    }
    expect((await gw.request('GET', '/devices/999999/qr?response_type=url')).body).toEqual({
      code: 404,
      status: 404,
      message: 'Device not found',
    });
  });

  it('answers 403 Device suspended for a suspended device', async () => {
    const gw = await start();
    const id = await newDevice(gw);
    await gw.app.services.devices.setStatus(id, 'SUSPENDED');
    const res = await gw.request('GET', `/devices/${id}/qr?response_type=url`);
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ code: 403, status: 403, message: 'Device suspended' });
    expect((await gw.request('GET', `/devices/${id}`)).body.data.status).toBe('SUSPENDED');
    await gw.app.services.devices.setStatus(id, 'ACTIVE');
    expect((await gw.request('GET', `/devices/${id}/qr?response_type=url`)).status).toBe(200);
  });

  it('answers 500 QR code generation failed when the network is unreachable', async () => {
    const gw = await start({ config: { network: 'sandbox+ws://127.0.0.1:9' } });
    const id = await newDevice(gw);
    const res = await gw.request('GET', `/devices/${id}/qr?response_type=url`);
    expect(res.status).toBe(500);
    expect(res.body.code).toBe(500);
    expect(res.body.message).toBe('QR code generation failed');
  });
});
