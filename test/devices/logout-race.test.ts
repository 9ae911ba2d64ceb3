// A logout asked through the API ends the device's session on the network, and the network answers with its own
// `logged_out` event for that same logout. Both record the logout; whichever is first lets the lease go. The API's
// answer must not depend on which: the event's record, lease released and all, coming first used to answer
// `503 Service unavailable` (the API's own write found the lease gone), about one whole test run in ten on
// PostgreSQL (test/devices/same-number.test.ts). Here the network holds its answer to `logout()` until the event's
// record is in and the lease released, so that order happens every time.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { createSandboxNetwork } from '../../src/network/sandbox/index.js';
import type { Network, NetworkConnection } from '../../src/network/network.js';
import { noStoreAvailable, startGateway, storeKind, type TestGateway } from '../helpers/gateway.js';
import { createPairedDevice } from '../helpers/pairing.js';
import { waitFor } from '../helpers/wait.js';

const PHONE = '6281300000811';

describe.skipIf(noStoreAvailable)('a logout the network also reports', () => {
  let gw: TestGateway;
  /** What `logout()` waits for after the network took it; set once the gateway is up. */
  let recordedFirst: (deviceId: number) => Promise<void> = async () => undefined;
  const slowLogouts = new Map<NetworkConnection, number>();

  function networkWhoseLogoutAnswersLate(): Network {
    const inner = createSandboxNetwork({ deliveryDelayMs: 5, readDelayMs: 5 });
    return {
      description: inner.description,
      sandbox: inner.sandbox,
      close: () => inner.close(),
      connect(options, onEvent) {
        const conn = inner.connect(options, onEvent);
        const logout = async () => {
          await conn.logout();
          await recordedFirst(options.deviceId);
        };
        const wrapped = new Proxy(conn, {
          get(target, property) {
            if (property === 'logout') return logout;
            const value = Reflect.get(target, property, target) as unknown;
            return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
          },
        });
        slowLogouts.set(wrapped, options.deviceId);
        return wrapped;
      },
    };
  }

  beforeAll(async () => {
    gw = await startGateway({ build: { network: networkWhoseLogoutAnswersLate() } });
    const { db } = gw.app.store;
    recordedFirst = async (deviceId) => {
      await waitFor(
        async () => {
          const row = await db
            .selectFrom('devices')
            .select('paired_status')
            .where('id', '=', deviceId)
            .executeTakeFirst();
          // PostgreSQL: the lease is released once the logout is recorded (SQLite has one node and no leases to move).
          const held =
            storeKind === 'postgres'
              ? (
                  await sql<{
                    n: number;
                  }>`select 1 as n from device_leases where device_id = ${deviceId} and node is not null`.execute(db)
                ).rows.length
              : 0;
          return { status: row?.paired_status, held };
        },
        (seen) => seen.status === 'UNPAIRED' && seen.held === 0,
        { what: "the network's logged_out recorded and the lease released" },
      );
    };
  });
  afterAll(() => gw?.close());

  it('answers 200 and the device is UNPAIRED, once, with one device.disconnected event', async () => {
    const device = await createPairedDevice(gw, PHONE);
    const answer = await gw.request('POST', `/devices/${device.id}/logout`);
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(answer.body.data).toMatchObject({ id: device.id, paired_status: 'UNPAIRED', connected: false });
    const events = await gw.app.store.db
      .selectFrom('events')
      .select('type')
      .where('device_id', '=', device.id)
      .where('type', '=', 'device.disconnected')
      .execute();
    expect(events).toHaveLength(1);
  });
});
