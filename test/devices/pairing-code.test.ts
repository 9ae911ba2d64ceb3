// docs/internals.md, WhatsApp and sandbox accounts: pairing by code, for phones that cannot scan.
// `POST /devices/{id}/pairing-code {phone}` answers the code; the phone's user
// types it (in the sandbox: `POST /sandbox/pair {pairing_code, phone}`), and
// the device pairs. Errors as for the QR route.
import { afterEach, describe, expect, it } from 'vitest';
import { noStoreAvailable, startGateway, type TestGateway } from '../helpers/gateway.js';
import { waitForDevice } from '../helpers/pairing.js';

const fast = { sandbox: { qrRotateMs: 20_000 }, connections: { reconnectBaseMs: 20, reconnectMaxMs: 200 } };
const PHONE = '6287700000001';
const CODE = /^[1-9A-HJ-NP-TV-Z]{4}-[1-9A-HJ-NP-TV-Z]{4}$/;

describe.skipIf(noStoreAvailable)('pairing by code', () => {
  const open: TestGateway[] = [];
  const start = async (options: Parameters<typeof startGateway>[0] = {}) => {
    const gw = await startGateway({ build: fast, ...options });
    open.push(gw);
    return gw;
  };
  afterEach(async () => {
    await Promise.all(open.splice(0).map((gw) => gw.close()));
  });

  const newDevice = async (gw: TestGateway, body: Record<string, unknown> = {}) =>
    (await gw.request('POST', '/devices', { package: 'BETA', name: 'by code', ...body })).body.data.id as number;

  it('answers a code bound to the phone; typing it pairs the device; then "Device connected"', async () => {
    const gw = await start();
    const id = await newDevice(gw);
    const res = await gw.request('POST', `/devices/${id}/pairing-code`, { phone: PHONE });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      code: 200,
      status: 200,
      message: 'Pairing code generated',
      data: { pairing_code: expect.stringMatching(CODE), phone: PHONE },
    });
    const typed = await gw.request('POST', '/sandbox/pair', { pairing_code: res.body.data.pairing_code, phone: PHONE });
    expect(typed.body).toEqual({
      code: 200,
      status: 200,
      message: 'Pairing code accepted',
      data: { device_phone: PHONE },
    });
    const device = await waitForDevice(gw, id, (d) => d.paired_status === 'PAIRED' && d.connected === true);
    expect(device.phone).toBe(PHONE);
    const again = await gw.request('POST', `/api/devices/${id}/pairing-code`, { phone: PHONE });
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ code: 200, status: 200, message: 'Device connected' });
  });

  it('shares the attempt with the QR route: the QR still works, and asking again gives a new code', async () => {
    const gw = await start();
    const id = await newDevice(gw);
    const first = (await gw.request('POST', `/devices/${id}/pairing-code`, { phone: PHONE })).body.data.pairing_code;
    const qr = await gw.request('GET', `/devices/${id}/qr?response_type=url`);
    expect(qr.status).toBe(200);
    const second = (await gw.request('POST', `/devices/${id}/pairing-code`, { phone: PHONE })).body.data.pairing_code;
    expect(second).not.toBe(first);
    const stale = await gw.request('POST', '/sandbox/pair', { pairing_code: first, phone: PHONE });
    expect(stale.status).toBe(400);
    expect(stale.body).toEqual({ code: 400, status: 400, message: 'Invalid pairing code' });
    expect((await gw.request('POST', '/sandbox/pair', { pairing_code: second, phone: PHONE })).status).toBe(200);
    await waitForDevice(gw, id, (d) => d.paired_status === 'PAIRED');
  });

  it('a device created for a number pairs only from it', async () => {
    const gw = await start();
    const id = await newDevice(gw, { phone: PHONE });
    const res = await gw.request('POST', `/devices/${id}/pairing-code`, { phone: '6287700000002' });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      code: 400,
      status: 400,
      message: 'Phone number mismatch',
      error: `this device must be paired from ${PHONE}`,
    });
    const ok = await gw.request('POST', `/devices/${id}/pairing-code`, { phone: PHONE });
    expect(ok.status).toBe(200);
    // The sandbox holds the code to the number it was made for.
    const other = await gw.request('POST', '/sandbox/pair', {
      pairing_code: ok.body.data.pairing_code,
      phone: '6287700000002',
    });
    expect(other.status).toBe(400);
    expect(other.body.message).toBe('Phone number mismatch');
  });

  it('refuses a malformed or missing phone, an unknown device and a suspended one', async () => {
    const gw = await start();
    const id = await newDevice(gw);
    for (const body of [
      { phone: '+6287700000001' },
      { phone: '12' },
      { phone: '62877 0000001' },
      { phone: 62877001 },
    ]) {
      const res = await gw.request('POST', `/devices/${id}/pairing-code`, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.message, JSON.stringify(body)).toBe('Invalid phone number format');
    }
    // A missing field is structurally invalid: the general validation answer (docs/internals.md, Answers and errors).
    const missing = await gw.request('POST', `/devices/${id}/pairing-code`, {});
    expect(missing.status).toBe(400);
    expect(missing.body).toMatchObject({
      code: 400,
      status: 400,
      message: 'Validation failed',
      errors: { phone: expect.any(Array) },
    });
    expect((await gw.request('POST', '/devices/999999/pairing-code', { phone: PHONE })).body).toEqual({
      code: 404,
      status: 404,
      message: 'Device not found',
    });
    await gw.app.services.devices.setStatus(id, 'SUSPENDED');
    const suspended = await gw.request('POST', `/devices/${id}/pairing-code`, { phone: PHONE });
    expect(suspended.status).toBe(403);
    expect(suspended.body).toEqual({ code: 403, status: 403, message: 'Device suspended' });
    const bad = await gw.request('POST', '/sandbox/pair', { pairing_code: 'AAAA-BBBB', phone: PHONE });
    expect(bad.body).toEqual({ code: 400, status: 400, message: 'Invalid pairing code' });
  });

  it('answers 500 Pairing code generation failed when the network is unreachable', async () => {
    const gw = await start({ config: { network: 'sandbox+ws://127.0.0.1:9' }, build: { ...fast } });
    const id = await newDevice(gw);
    const res = await gw.request('POST', `/devices/${id}/pairing-code`, { phone: PHONE });
    expect(res.status).toBe(500);
    expect(res.body).toMatchObject({ code: 500, status: 500, message: 'Pairing code generation failed' });
  });

  it("another account cannot complete a device's pairing code (it is unknown to it)", async () => {
    const gw = await start();
    const id = await newDevice(gw);
    const code = (await gw.request('POST', `/devices/${id}/pairing-code`, { phone: PHONE })).body.data.pairing_code;
    const other = await gw.app.services.accounts.createAccount('other', 10);
    const token = (await gw.app.services.accounts.createToken(other.id, 'test')).token;
    const res = await gw.request('POST', '/sandbox/pair', { pairing_code: code, phone: PHONE }, token);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 400, status: 400, message: 'Invalid pairing code' });
    expect((await gw.request('GET', `/devices/${id}`)).body.data.paired_status).toBe('UNPAIRED');
    expect((await gw.request('POST', '/sandbox/pair', { pairing_code: code, phone: PHONE })).status).toBe(200);
  });
});
