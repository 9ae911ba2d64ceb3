// docs/internals.md, Groups: both members-add counters are kept in the store, so a restart forgets neither the requests of the
// last minute nor the day's additions.
import { afterAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import {
  newStoreLocation,
  noStoreAvailable,
  startGateway,
  type StoreLocation,
  type TestGateway,
} from '../helpers/gateway.js';
import { createPairedDevice, waitForDevice } from '../helpers/pairing.js';
import { addMembers, adminGroup, numbers } from './helpers.js';

const fresh = numbers('62833');

describe.skipIf(noStoreAvailable)('members-add counters across a restart', () => {
  const running: TestGateway[] = [];
  let location: StoreLocation | undefined;
  afterAll(async () => {
    for (const gw of running) await gw.close();
    await location?.drop();
  });

  it('still refuses the 11th request of the minute and still knows the day’s additions after a restart', async () => {
    const clock = new ManualClock(Date.UTC(2026, 4, 20, 9));
    location = await newStoreLocation();
    const first = await startGateway({ location, clock });
    running.push(first);
    const paired = await createPairedDevice(first, '6283399000001');
    const group = await adminGroup(first, paired.phone, 'Survivor', fresh(1));

    // 300 additions spread out, then 190 more in ten requests within one minute: 490 today, the window full.
    for (let i = 0; i < 15; i++) {
      expect((await addMembers(first, group.id, fresh(20))).status).toBe(200);
      clock.advance(6_500);
    }
    clock.advance(61_000);
    for (let i = 0; i < 10; i++) {
      const res = await addMembers(first, group.id, fresh(i < 9 ? 20 : 10));
      expect(res.status).toBe(200);
      expect(res.body.data.total_failed).toBe(0);
    }
    await first.close({ keepStore: true });

    const second = await startGateway({ location, clock });
    running.push(second);
    await waitForDevice(second, paired.id, (d) => d.connected === true, 'reconnected after restart');

    const eleventh = await addMembers(second, group.id, fresh(1));
    expect(eleventh.status).toBe(429);
    expect(eleventh.body).toEqual({ code: 429, status: 429, message: 'Too many requests' });
    expect(eleventh.headers['retry-after']).toBe('60');

    clock.advance(61_000);
    const crossing = await addMembers(second, group.id, fresh(20));
    expect(crossing.status).toBe(200);
    expect(crossing.body.data.total_added).toBe(10);
    expect(crossing.body.data.failed_members.every((m: any) => m.error_code === 'RATE_LIMITED')).toBe(true);
    expect((await addMembers(second, group.id, fresh(1))).status).toBe(429);
  });
});
