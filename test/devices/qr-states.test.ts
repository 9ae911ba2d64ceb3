// The QR route answers what the device is (issue 10 items 9 and 19):
// connected → 200 `Device connected`; paired but offline → 409 `Device
// offline, reconnecting` (it reconnects by itself and needs no QR); a QR
// request racing a deletion or a logout → 404 `Device not found` or 409
// `Device logged out`, never a 500.
import { afterEach, describe, expect, it } from 'vitest';
import { noStoreAvailable, startGateway, type Answer, type TestGateway } from '../helpers/gateway.js';
import { createPairedDevice, waitForDevice } from '../helpers/pairing.js';

describe.skipIf(noStoreAvailable)('the QR route answers what the device is', () => {
  let gw: TestGateway | undefined;
  afterEach(async () => {
    await gw?.close();
    gw = undefined;
  });

  it('connected: 200 Device connected; paired but offline: 409 Device offline, reconnecting', async () => {
    // Reconnects are a minute away, so the device stays offline while the test looks.
    gw = await startGateway({ build: { connections: { reconnectBaseMs: 60_000, reconnectMaxMs: 60_000 } } });
    const device = await createPairedDevice(gw, '6281700002101');
    const connected = await gw.request('GET', `/devices/${device.id}/qr?response_type=url`);
    expect(connected.status).toBe(200);
    expect(connected.body).toEqual({ code: 200, status: 200, message: 'Device connected' });

    const dropped = await gw.request('POST', `/sandbox/devices/${device.id}/disconnect`, { logout: false });
    expect(dropped.status).toBe(200);
    await waitForDevice(gw, device.id, (d) => d.connected === false, 'offline');
    const offline = await gw.request('GET', `/devices/${device.id}/qr?response_type=url`);
    expect(offline.status).toBe(409);
    expect(offline.body).toMatchObject({ code: 409, status: 409, message: 'Device offline, reconnecting' });
    expect(typeof offline.body.error).toBe('string');
    const row = (await gw.request('GET', `/devices/${device.id}`)).body.data;
    expect(row).toMatchObject({ paired_status: 'PAIRED', connected: false });
  });

  it('a QR request racing a deletion or a logout answers 404 or 409 Device logged out, never 500 (80 races)', async () => {
    gw = await startGateway();
    const g = gw;
    await g.app.services.accounts.setMaxDevices('default', 200);
    const unpaired: number[] = [];
    for (let i = 0; i < 48; i++) {
      const res = await g.request('POST', '/devices', { package: 'BETA', name: `race ${i}` });
      expect(res.status).toBe(201);
      unpaired.push(res.body.data.id as number);
    }
    const paired: number[] = [];
    for (let i = 0; i < 32; i++)
      paired.push((await createPairedDevice(g, `62817000031${String(i).padStart(2, '0')}`)).id);

    const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    const race = async (id: number, i: number) => {
      const qr = (async () => {
        await pause(i % 3);
        return g.request('GET', `/devices/${id}/qr?response_type=url`);
      })();
      const other = (async () => {
        await pause((i >> 1) % 3);
        return i % 2 === 0 ? g.request('DELETE', `/devices/${id}`) : g.request('POST', `/devices/${id}/logout`);
      })();
      return { id, deletes: i % 2 === 0, qr: await qr, other: await other };
    };
    const results = await Promise.all([...unpaired, ...paired].map((id, i) => race(id, i)));

    const seen = new Map<string, number>();
    for (const { id, deletes, qr, other } of results) {
      const what = `device ${id} (${deletes ? 'delete' : 'logout'}): ${qr.status} ${JSON.stringify(qr.body)}`;
      expect(other.status, JSON.stringify(other.body)).toBe(200);
      expect(allowedQrAnswer(qr, deletes), what).toBe(true);
      const key = `${deletes ? 'delete' : 'logout'} → ${qr.status} ${qr.body.message}`;
      seen.set(key, (seen.get(key) ?? 0) + 1);
    }
    // Each race ended in a state the API tells consistently.
    for (const { id, deletes } of results) {
      const after = await g.request('GET', `/devices/${id}`);
      if (deletes) expect(after.status).toBe(404);
      else expect(after.body.data.paired_status).not.toBe('PAIRED');
    }
    expect((await g.request('GET', '/healthz', undefined, null)).status).toBe(200);
    // What the races produced, for whoever reads a failure.
    expect([...seen.keys()].length).toBeGreaterThan(0);
  });
});

function allowedQrAnswer(answer: Answer, deletes: boolean): boolean {
  const { status, body } = answer;
  if (status === 200) return body.message === 'Device connected' || typeof body.data?.qr === 'string';
  if (deletes) return status === 404 && body.code === 404 && body.message === 'Device not found';
  return status === 409 && body.code === 409 && body.message === 'Device logged out';
}
