// A device created for a number that another device of the account is already paired with: sends from that number
// go through the paired device (the new one cannot pair as that number while the other holds it). They used to be
// answered `400 Device not connected`, because the look-up by number took the newest device, the unpaired one.
// docs/guide.md, Devices.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { noStoreAvailable, startGateway, type TestGateway } from '../helpers/gateway.js';
import { createPairedDevice } from '../helpers/pairing.js';

describe.skipIf(noStoreAvailable)('two devices for one number', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway();
  });
  afterAll(() => gw?.close());

  it('sends from the paired, connected device, not the one waiting to pair', async () => {
    const phone = '6281300000801';
    const paired = await createPairedDevice(gw, phone);
    const waiting = await gw.request('POST', '/devices', { package: 'BETA', name: 'second', phone });
    expect(waiting.status).toBe(201);
    expect(waiting.body.data).toMatchObject({ paired_status: 'UNPAIRED', connected: false });

    const sent = await gw.request('POST', '/messages', {
      device: phone,
      receiver: '6289876543210',
      type: 'chat',
      params: { text: 'from the paired one' },
    });
    expect(sent.status, JSON.stringify(sent.body)).toBe(200);
    const row = await gw.app.store.db
      .selectFrom('messages')
      .select('device_id')
      .where('id', '=', sent.body.data.id)
      .executeTakeFirstOrThrow();
    expect(Number(row.device_id)).toBe(paired.id);
  });

  it('sends from the newer device once the older one is logged out and the newer one pairs', async () => {
    const phone = '6281300000802';
    const old = await createPairedDevice(gw, phone);
    const created = await gw.request('POST', '/devices', { package: 'BETA', name: 'replacement', phone });
    const newer = created.body.data.id as number;
    const loggedOut = await gw.request('POST', `/devices/${old.id}/logout`);
    expect(loggedOut.status, JSON.stringify(loggedOut.body)).toBe(200);
    // Before it pairs, the number names the device waiting for it: not connected yet.
    const early = await gw.request('POST', '/messages', { device: phone, receiver: '6289876543210', message: 'x' });
    expect(early.body).toMatchObject({ code: 400, message: 'Device not connected' });
    const qr = await gw.request('GET', `/sandbox/devices/${newer}/qr`);
    expect((await gw.request('POST', '/sandbox/scan', { qr: qr.body.data.qr, phone })).status).toBe(200);
    const sent = await gw.request('POST', '/messages', { device: phone, receiver: '6289876543210', message: 'y' });
    expect(sent.status, JSON.stringify(sent.body)).toBe(200);
    const row = await gw.app.store.db
      .selectFrom('messages')
      .select('device_id')
      .where('id', '=', sent.body.data.id)
      .executeTakeFirstOrThrow();
    expect(Number(row.device_id)).toBe(newer);
  });
});
