// Issue 24, item 3: a QR of a device created for one number, confirmed by another phone. WhatsApp can only
// unlink over an open connection, and the phone's confirmation comes before the restart that opens it: the
// unlink waits for the open socket and goes out there; the session's stored state is deleted; the device
// stays UNPAIRED with `device.disconnected` naming why.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { noStoreAvailable, type TestGateway } from '../../helpers/gateway.js';
import { waitFor } from '../../helpers/wait.js';
import { Recorder } from '../helpers.js';
import { SLOW as SLOW_MS, WhatsAppHarness } from './harness.js';
import { scanOverFake, startWhatsAppGateway, type WhatsAppGateway } from './paired-gateway.js';

const KEYS = { current: Buffer.alloc(32, 0x26), previous: [] };
const EXPECTED = '4915100000091';
const WRONG = '4917600000093';
const SLOW = { timeoutMs: 10_000 };

describe.skipIf(noStoreAvailable)('a QR confirmed by the wrong phone (scripted socket)', () => {
  let at: WhatsAppGateway;
  let gw: TestGateway;

  beforeAll(async () => {
    at = await startWhatsAppGateway(KEYS, { allowPrivateUrls: true });
    gw = at.gw;
  });
  afterAll(() => gw?.close());

  it('is unlinked once the connection opens, its state deleted, the device UNPAIRED and told why', async () => {
    const created = await gw.request('POST', '/devices', { package: 'BUSINESS', name: 'wrong', phone: EXPECTED });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const id = created.body.data.id as number;
    expect((await gw.request('PATCH', `/devices/${id}`, { webhook_url: 'http://127.0.0.1:9/hook' })).status).toBe(200);
    const second = await scanOverFake(at, id, `${WRONG}:5@s.whatsapp.net`);
    second.connection({ connection: 'open' });
    // The unlink goes out on the open socket (the fake answers it with the network's 401 close).
    await waitFor(
      async () => second.calls.some((c) => c.method === 'logout'),
      (sent) => sent,
      { what: 'the unlink sent', ...SLOW },
    );
    const events = await waitFor(
      async () => await gw.app.store.db.selectFrom('webhook_events').selectAll().where('device_id', '=', id).execute(),
      (rows) => rows.some((e) => e.type === 'device.disconnected'),
      { what: 'device.disconnected', ...SLOW },
    );
    const told = JSON.parse(events.find((e) => e.type === 'device.disconnected')!.payload);
    expect(told.data).toMatchObject({
      paired_status: 'UNPAIRED',
      reason: 'pairing refused: another number scanned the QR',
    });
    expect(events.map((e) => e.type)).not.toContain('device.paired');
    const device = (await gw.request('GET', `/devices/${id}`)).body.data;
    expect(device).toMatchObject({ paired_status: 'UNPAIRED', connected: false });
    await waitFor(
      async () => (await gw.app.store.db.selectFrom('network_auth').select('session_id').execute()).length,
      (rows) => rows === 0,
      { what: 'the session state deleted', ...SLOW },
    );
  });
});

describe.skipIf(noStoreAvailable)('a logout between the phone confirming and the connection opening', () => {
  it('waits for the open socket, unlinks there, and ends logged out with no state and no `connected`', async () => {
    const h = await WhatsAppHarness.open();
    try {
      const rec = new Recorder();
      const connection = h.network.connect({ deviceId: 1, session: null }, rec.handler);
      const first = await h.wa.socket(0);
      first.connection({ qr: 'qr-1' });
      first.pairSuccess(`${WRONG}:5@s.whatsapp.net`);
      await rec.wait('paired', undefined, 0, SLOW_MS);
      const unlinked = connection.logout();
      first.close(515, 'Stream Errored (restart required)');
      const second = await h.wa.socket(1);
      second.connection({ connection: 'open' });
      await unlinked;
      expect(second.calls.filter((c) => c.method === 'logout')).toHaveLength(1);
      await rec.wait('logged_out', undefined, 0, SLOW_MS);
      expect(rec.types()).toEqual(['qr', 'paired', 'logged_out']);
      expect((await h.store.db.selectFrom('network_auth').select('session_id').execute()).length).toBe(0);
    } finally {
      await h.close();
    }
  });
});
