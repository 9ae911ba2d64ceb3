// Once `POST /sandbox/scan` has answered, the device is paired as far as the gateway is concerned: a send from its
// number right after the answer is accepted on both stores (it used to get `404 Device not found` on PostgreSQL,
// where recording the pairing takes longer than the scan's answer). docs/guide.md, The sandbox.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { noStoreAvailable, startGateway, type TestGateway } from '../helpers/gateway.js';
import { sandboxQrText } from '../helpers/pairing.js';

describe.skipIf(noStoreAvailable)('a send right after the scan', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway({ build: { sandbox: { qrRotateMs: 600_000 } } });
    await gw.app.services.accounts.setMaxDevices('default', 20);
  });
  afterAll(() => gw?.close());

  it('is accepted from the number just scanned, every time', async () => {
    // Several devices, one after another: each pairing is one more chance for the send to overtake it.
    for (let i = 0; i < 8; i++) {
      const phone = `62812000070${String(i).padStart(2, '0')}`;
      const created = await gw.request('POST', '/devices', { package: 'BETA', name: `scan ${i}` });
      expect(created.status).toBe(201);
      const id = created.body.data.id as number;
      const scan = await gw.request('POST', '/sandbox/scan', { qr: await sandboxQrText(gw, id), phone });
      expect(scan.status, JSON.stringify(scan.body)).toBe(200);
      const sent = await gw.request('POST', '/messages', {
        device: phone,
        receiver: '6289876543210',
        type: 'chat',
        params: { text: `right after scan ${i}` },
      });
      expect(sent.status, JSON.stringify(sent.body)).toBe(200);
      const device = await gw.request('GET', `/devices/${id}`);
      expect(device.body.data).toMatchObject({ paired_status: 'PAIRED', phone, connected: true });
    }
  });
});
