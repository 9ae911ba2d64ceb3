// Spec 8, docs/internals.md, Groups: per group, 10 members-add requests per minute (429 + Retry-After) and 500 additions per UTC
// day (RATE_LIMITED past the budget, 429 with none left), exact under concurrent requests. Time is a ManualClock the
// tests move; nothing sleeps.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { noStoreAvailable, startGateway, type TestGateway } from '../helpers/gateway.js';
import { createPairedDevice } from '../helpers/pairing.js';
import { addMembers, adminGroup, numbers } from './helpers.js';

const SECOND = 1000;
const fresh = numbers('62831');

describe.skipIf(noStoreAvailable)('members-add limits', () => {
  let gw: TestGateway;
  let device: string;
  // Noon UTC, so a whole test's worth of minutes stays within one day unless a test crosses midnight on purpose.
  const clock = new ManualClock(Date.UTC(2026, 2, 10, 12));
  beforeAll(async () => {
    gw = await startGateway({ clock, build: { sandbox: { deliveryDelayMs: 5 } } });
    device = (await createPairedDevice(gw, '6283199000001')).phone;
  });
  afterAll(() => gw?.close());

  /** Spends `additions` of the group's daily budget in requests of 20, spaced so the minute window never fills. */
  async function spend(groupId: number, additions: number): Promise<void> {
    for (let left = additions; left > 0; left -= 20) {
      const res = await addMembers(gw, groupId, fresh(Math.min(20, left)));
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.data.total_failed).toBe(0);
      clock.advance(6_500);
    }
    // A clean minute window for what the test does next.
    clock.advance(61 * SECOND);
  }

  it('answers the 11th request in a minute with 429 Too many requests and Retry-After, and admits it once a slot frees', async () => {
    const group = await adminGroup(gw, device, 'Busy', fresh(1));
    const other = await adminGroup(gw, device, 'Quiet', fresh(1));
    const start = clock.now();
    for (let i = 0; i < 10; i++) {
      const res = await addMembers(gw, group.id, fresh(1));
      expect(res.status, `request ${i + 1}`).toBe(200);
      clock.advance(SECOND);
    }
    // 10 s after the first: its slot frees 50 s from now.
    const eleventh = await addMembers(gw, group.id, fresh(1));
    expect(eleventh.status).toBe(429);
    expect(eleventh.body).toEqual({ code: 429, status: 429, message: 'Too many requests' });
    expect(eleventh.headers['retry-after']).toBe('50');

    // The limit is per group.
    expect((await addMembers(gw, other.id, fresh(1))).status).toBe(200);

    clock.set(start + 60 * SECOND - 1);
    const stillEarly = await addMembers(gw, group.id, fresh(1));
    expect(stillEarly.status).toBe(429);
    expect(stillEarly.headers['retry-after']).toBe('1');

    clock.set(start + 60 * SECOND);
    const admitted = await addMembers(gw, group.id, fresh(1));
    expect(admitted.status).toBe(200);
    expect(admitted.body.data.total_added).toBe(1);
    // That one took the freed slot: the window is full again until the second request's slot frees.
    const refused = await addMembers(gw, group.id, fresh(1));
    expect(refused.status).toBe(429);
    expect(refused.headers['retry-after']).toBe('1');
    clock.advance(61 * SECOND);
  });

  it('refused requests take no slot: a client retrying too early is not locked out longer', async () => {
    const group = await adminGroup(gw, device, 'Patient', fresh(1));
    for (let i = 0; i < 10; i++) expect((await addMembers(gw, group.id, fresh(1))).status).toBe(200);
    for (let i = 0; i < 5; i++) {
      clock.advance(10 * SECOND);
      expect((await addMembers(gw, group.id, fresh(1))).status).toBe(429);
    }
    clock.advance(10 * SECOND);
    expect((await addMembers(gw, group.id, fresh(1))).status).toBe(200);
    clock.advance(61 * SECOND);
  });

  it('crosses the daily budget in the middle of a request: the rest fail RATE_LIMITED, then 429 until UTC midnight', async () => {
    const group = await adminGroup(gw, device, 'Daily', fresh(1));
    await spend(group.id, 490);

    const twenty = fresh(20);
    const crossing = await addMembers(gw, group.id, twenty);
    expect(crossing.status).toBe(200);
    expect(crossing.body.message).toBe('Some members added successfully');
    expect(crossing.body.data.added_members.map((m: any) => m.phone)).toEqual(twenty.slice(0, 10));
    expect(crossing.body.data.failed_members.map((m: any) => [m.phone, m.error_code])).toEqual(
      twenty.slice(10).map((phone) => [phone, 'RATE_LIMITED']),
    );
    expect(crossing.body.data.total_added).toBe(10);
    expect(crossing.body.data.new_participant_count).toBe(1 + 1 + 500);

    clock.advance(SECOND);
    const none = await addMembers(gw, group.id, fresh(1));
    expect(none.status).toBe(429);
    expect(none.body).toEqual({ code: 429, status: 429, message: 'Too many requests' });
    const midnight = Date.UTC(2026, 2, 11);
    expect(Number(none.headers['retry-after'])).toBe(Math.ceil((midnight - clock.now()) / 1000));

    // Malformed numbers need no budget, but a request with none left is refused as a whole.
    expect((await addMembers(gw, group.id, ['nope'])).status).toBe(429);

    clock.set(midnight);
    const nextDay = await addMembers(gw, group.id, fresh(2));
    expect(nextDay.status).toBe(200);
    expect(nextDay.body.data.total_added).toBe(2);
    clock.advance(61 * SECOND);
  });

  it('spends budget only on members actually added: refusals by the network give their reservation back', async () => {
    const [member] = fresh(1) as [string];
    const group = await adminGroup(gw, device, 'Give back', [member]);
    await spend(group.id, 495);

    // Five units left: the first five well-formed numbers are tried; two of them are refused by the network.
    const [a, b, c, d, e] = fresh(5) as [string, string, string, string, string];
    const res = await addMembers(gw, group.id, [member, '6283122220004', 'bad', a, b, c, d, e]);
    expect(res.status).toBe(200);
    expect(res.body.data.added_members.map((m: any) => m.phone)).toEqual([a, b, c]);
    expect(res.body.data.failed_members.map((m: any) => [m.phone, m.error_code])).toEqual([
      [member, 'ALREADY_MEMBER'],
      ['6283122220004', 'RATE_LIMITED'],
      ['bad', 'INVALID_NUMBER'],
      [d, 'RATE_LIMITED'],
      [e, 'RATE_LIMITED'],
    ]);

    // 498 spent: two more fit.
    const [f, g, h] = fresh(3) as [string, string, string];
    const next = await addMembers(gw, group.id, [f, g, h]);
    expect(next.status).toBe(200);
    expect(next.body.data.added_members.map((m: any) => m.phone)).toEqual([f, g]);
    expect(next.body.data.failed_members.map((m: any) => [m.phone, m.error_code])).toEqual([[h, 'RATE_LIMITED']]);
    expect((await addMembers(gw, group.id, fresh(1))).status).toBe(429);
    clock.advance(61 * SECOND);
  });

  it('admits exactly 10 of 25 concurrent requests in one minute', async () => {
    const group = await adminGroup(gw, device, 'Stampede', fresh(1));
    const answers = await Promise.all(Array.from({ length: 25 }, () => addMembers(gw, group.id, fresh(1))));
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(10);
    expect(statuses.filter((s) => s === 429)).toHaveLength(15);
    for (const refused of answers.filter((a) => a.status === 429)) expect(refused.headers['retry-after']).toBe('60');
    const detail = (await gw.request('GET', `/groups/${group.id}`)).body.data;
    expect(detail.participant_count).toBe(2 + 10);
    clock.advance(61 * SECOND);
  });

  it('gives the last units of the day to exactly one request at a time when many race for them', async () => {
    const group = await adminGroup(gw, device, 'Last units', fresh(1));
    await spend(group.id, 495);
    const before = (await gw.request('GET', `/groups/${group.id}`)).body.data.participant_count;

    // Twenty requests in flight at once, three new members each, five units left: the first admitted takes three,
    // the second two (its third fails RATE_LIMITED), every other one finds nothing left (or the minute full): 429.
    const answers = await Promise.all(Array.from({ length: 20 }, () => addMembers(gw, group.id, fresh(3))));
    const ok = answers.filter((a) => a.status === 200);
    expect(answers.filter((a) => a.status === 429)).toHaveLength(18);
    expect(ok.map((a) => a.body.data.total_added).sort()).toEqual([2, 3]);
    expect(ok.map((a) => a.body.data.total_failed).sort()).toEqual([0, 1]);
    const partial = ok.find((a) => a.body.data.total_added === 2)!;
    expect(partial.body.data.failed_members[0].error_code).toBe('RATE_LIMITED');

    const after = await gw.request('GET', `/groups/${group.id}`);
    expect(after.body.data.participant_count).toBe(before + 5);
    clock.advance(61 * SECOND);
    expect((await addMembers(gw, group.id, fresh(1))).status).toBe(429);
    clock.advance(61 * SECOND);
  });
});
