// docs/internals.md, WhatsApp and sandbox accounts: a device's stored network state (credentials, keys, sent
// records, offers of lists sent as text) ends with its session: on logout through the API, on a logout from
// the phone, and when the device is deleted (also while it is offline).
// Other sessions' state is untouched.
import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.js';
import { SqlNetworkStateStore } from '../../src/devices/network-state.js';
import { noStoreAvailable, startGateway, type TestGateway } from '../helpers/gateway.js';
import { createPairedDevice, waitForDevice } from '../helpers/pairing.js';
import { waitFor } from '../helpers/wait.js';

const fast = { sandbox: { qrRotateMs: 20_000 }, connections: { reconnectBaseMs: 20, reconnectMaxMs: 200 } };

describe.skipIf(noStoreAvailable)('network state follows the device session', () => {
  const open: TestGateway[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((gw) => gw.close()));
  });
  async function start(): Promise<TestGateway> {
    const gw = await startGateway({ build: fast });
    open.push(gw);
    return gw;
  }

  /** Stores state under the device's session, as a real network would have. */
  async function seed(gw: TestGateway, session: string): Promise<void> {
    const writer = await new SqlNetworkStateStore(gw.app.store, systemClock).claim(session, { create: true });
    await writer!.write({ creds: Buffer.of(1), keys: [{ kind: 'session', id: 'a.0', value: Buffer.of(2) }] });
    await writer!.recordSent('m1', Buffer.of(3), 1);
    await writer!.recordOffer('6289999999999', Buffer.of(4), Date.now());
  }

  async function sessionOf(gw: TestGateway, deviceId: number): Promise<string> {
    const row = await gw.app.store.db
      .selectFrom('devices')
      .select('network_session')
      .where('id', '=', deviceId)
      .executeTakeFirstOrThrow();
    return row.network_session!;
  }

  async function rows(gw: TestGateway, session: string): Promise<number> {
    let n = 0;
    for (const table of ['network_auth', 'network_auth_keys', 'network_sent', 'network_offers'] as const) {
      n += (await gw.app.store.db.selectFrom(table).select('session_id').where('session_id', '=', session).execute())
        .length;
    }
    return n;
  }

  it('logout through the API deletes it; another device keeps its own', async () => {
    const gw = await start();
    const device = await createPairedDevice(gw, '6281111111101');
    const other = await createPairedDevice(gw, '6281111111102');
    const session = await sessionOf(gw, device.id);
    const otherSession = await sessionOf(gw, other.id);
    await seed(gw, session);
    await seed(gw, otherSession);
    expect(await rows(gw, session)).toBe(4);
    expect((await gw.request('POST', `/devices/${device.id}/logout`)).status).toBe(200);
    expect(await rows(gw, session)).toBe(0);
    expect(await rows(gw, otherSession)).toBe(4);
  });

  it('a logout from the phone deletes it', async () => {
    const gw = await start();
    const device = await createPairedDevice(gw, '6281111111103');
    const session = await sessionOf(gw, device.id);
    await seed(gw, session);
    await gw.request('POST', `/sandbox/devices/${device.id}/disconnect`, { logout: true });
    await waitForDevice(gw, device.id, (d) => d.paired_status === 'UNPAIRED');
    expect(await rows(gw, session)).toBe(0);
  });

  it('deleting the device deletes it, also while the device is offline', async () => {
    const gw = await start();
    const device = await createPairedDevice(gw, '6281111111104');
    const session = await sessionOf(gw, device.id);
    await seed(gw, session);
    // Offline: the connection is gone, so no logout reaches the network; the stored state goes all the same.
    await gw.app.services.connections.release(device.id, { logout: false });
    expect((await gw.request('DELETE', `/devices/${device.id}`)).status).toBe(200);
    expect(await rows(gw, session)).toBe(0);
  });

  it('at start-up, deletes state of pairing attempts that never became a device, once they are old', async () => {
    const gw = await start();
    const device = await createPairedDevice(gw, '6281111111105');
    const held = await sessionOf(gw, device.id);
    for (const session of [held, 'wa1.orphan-old', 'wa1.orphan-young']) await seed(gw, session);
    const twoHoursAgo = Date.now() - 2 * 3_600_000;
    await gw.app.store.db
      .updateTable('network_auth')
      .set({ updated_at: twoHoursAgo })
      .where('session_id', 'in', [held, 'wa1.orphan-old'])
      .execute();
    await gw.close({ keepStore: true });
    open.pop();
    const again = await startGateway({ location: gw.location, build: fast });
    open.push(again);
    await again.app.ready();
    await waitFor(
      () => rows(again, 'wa1.orphan-old'),
      (n) => n === 0,
      { what: 'the old orphan deleted' },
    );
    // A device's session, however old, and a recent attempt (it may still be running) stay.
    expect(await rows(again, held)).toBe(4);
    expect(await rows(again, 'wa1.orphan-young')).toBe(4);
  });
});
