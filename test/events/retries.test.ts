// docs/internals.md, Webhooks: failed deliveries are retried with backoff until the give-up
// age, every attempt is in the delivery log, a delivery can be sent again by
// hand, and the signing secret rotates. The tests of the retries' times run a gateway on a FakeClock: a retry comes
// due when the test moves the clock to the time it was scheduled for, so every wait is read exactly and none is
// waited for.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { FakeClock, iso } from '../../src/clock.js';
import { noStoreAvailable, startGateway, type TestGateway } from '../helpers/gateway.js';
import { waitFor } from '../helpers/wait.js';
import {
  deliveries,
  pairedWithWebhook,
  quickWebhooks,
  sendChat,
  receiverPool,
  verified,
  waitForEvent,
} from './helpers.js';

describe.skipIf(noStoreAvailable)('webhook retries and the delivery log', () => {
  let gw: TestGateway;
  const receivers = receiverPool();
  const receiver = receivers.start;
  let phones = 10;
  const nextPhone = () => `62872000000${phones++}`;

  beforeAll(async () => {
    gw = await startGateway({
      config: { allowPrivateUrls: true, sendIntervalMs: 0 },
      build: {
        sandbox: { deliveryDelayMs: 5, readDelayMs: 5 },
        webhooks: { ...quickWebhooks, retryScheduleMs: [50, 300], maxAgeMs: 1500 },
      },
    });
  });
  afterEach(async () => {
    await receivers.closeAll();
  });
  afterAll(() => gw?.close());

  it('a manual retry sends a delivered event again, under the same webhook-id', async () => {
    const hooks = await receiver();
    const device = await pairedWithWebhook(gw, nextPhone(), hooks.url);
    const first = await waitForEvent(hooks, 'device.paired');
    const id = first.headers['webhook-id'] as string;
    await waitFor(
      () => deliveries(gw, device.id),
      (list) => list[0]?.status === 'delivered',
      { what: 'the first attempt recorded' },
    );
    const res = await gw.request('POST', `/api/devices/${device.id}/webhook-deliveries/${id}/retry`);
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ id, status: 'pending' });
    await waitFor(
      () => hooks.byId(id).length,
      (n) => n === 2,
      { what: 'sent again' },
    );
    const [again, before] = hooks.byId(id).reverse();
    expect(again!.body).toBe(before!.body);
    const [delivery] = await waitFor(
      () => deliveries(gw, device.id),
      (list) => list[0]?.attempts.length === 2 && list[0].status === 'delivered',
      { what: 'two attempts logged' },
    );
    expect(delivery.attempts.map((a: any) => a.http_status)).toEqual([200, 200]);
  });

  it('a manual retry asked for while an attempt is in flight is not lost when that attempt succeeds', async () => {
    let release!: () => void;
    const held = new Promise<number>((resolve) => (release = () => resolve(200)));
    // The first attempt is held at the receiver until the retry has been accepted.
    const hooks = await receiver((_request, n) => (n === 1 ? held : 200));
    const device = await pairedWithWebhook(gw, nextPhone(), hooks.url);
    const first = await waitForEvent(hooks, 'device.paired');
    const id = first.headers['webhook-id'] as string;
    const [inFlight] = await deliveries(gw, device.id);
    expect(inFlight).toMatchObject({ id, status: 'pending', next_attempt_at: null, attempts: [] });

    const res = await gw.request('POST', `/devices/${device.id}/webhook-deliveries/${id}/retry`);
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ id, status: 'pending' });
    // Nothing is sent twice at once: the retry waits for the attempt under way.
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(hooks.byId(id)).toHaveLength(1);

    release();
    await waitFor(
      () => hooks.byId(id).length,
      (n) => n === 2,
      { what: 'sent again after the held attempt' },
    );
    const [delivery] = await waitFor(
      () => deliveries(gw, device.id),
      (list) => list[0]?.attempts.length === 2 && list[0].status === 'delivered',
      { what: 'two attempts logged, delivered' },
    );
    expect(delivery.attempts.map((a: any) => a.http_status)).toEqual([200, 200]);
    // The second attempt started after the first was recorded, not alongside it.
    expect(Date.parse(delivery.attempts[1].attempted_at)).toBeGreaterThanOrEqual(
      Date.parse(delivery.attempts[0].attempted_at),
    );
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(hooks.byId(id)).toHaveLength(2);
  });

  it('answers 404 for an unknown delivery, another account’s or a missing device, and 400 with no webhook URL', async () => {
    const hooks = await receiver();
    const device = await pairedWithWebhook(gw, nextPhone(), hooks.url);
    const event = await waitForEvent(hooks, 'device.paired');
    const id = event.headers['webhook-id'] as string;

    const unknown = await gw.request('POST', `/devices/${device.id}/webhook-deliveries/evt_nope/retry`);
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ code: 404, status: 404, message: 'Delivery not found' });
    const otherDevice = (await gw.request('POST', '/devices', { package: 'BETA', name: 'other' })).body.data.id;
    const wrongDevice = await gw.request('POST', `/devices/${otherDevice}/webhook-deliveries/${id}/retry`);
    expect(wrongDevice.body).toEqual({ code: 404, status: 404, message: 'Delivery not found' });
    for (const path of [`/devices/999999/webhook-deliveries`, `/devices/999999/webhook-secret`]) {
      const res = await gw.request(path.endsWith('secret') ? 'POST' : 'GET', path);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ code: 404, status: 404, message: 'Device not found' });
    }
    const missing = await gw.request('POST', `/devices/999999/webhook-deliveries/${id}/retry`);
    expect(missing.body).toEqual({ code: 404, status: 404, message: 'Device not found' });
    // Another account sees none of it: its answers are those of a missing device.
    const other = await gw.app.services.accounts.createAccount('webhooks-other');
    const otherToken = (await gw.app.services.accounts.createToken(other.id, 't')).token;
    for (const [method, path] of [
      ['GET', `/devices/${device.id}/webhook-deliveries`],
      ['POST', `/devices/${device.id}/webhook-deliveries/${id}/retry`],
      ['POST', `/devices/${device.id}/webhook-secret`],
    ] as const) {
      const res = await gw.request(method, path, undefined, otherToken);
      expect(res.body).toEqual({ code: 404, status: 404, message: 'Device not found' });
    }

    await gw.request('PATCH', `/devices/${device.id}`, { webhook_url: null });
    const noUrl = await gw.request('POST', `/devices/${device.id}/webhook-deliveries/${id}/retry`);
    expect(noUrl.status).toBe(400);
    expect(noUrl.body).toMatchObject({ code: 400, status: 400, message: 'Webhook URL not set' });
  });

  it('pages the log newest first and filters it by status and type', async () => {
    const hooks = await receiver();
    const phone = nextPhone();
    const device = await pairedWithWebhook(gw, phone, hooks.url);
    for (let i = 0; i < 3; i++) await sendChat(gw, phone, '6287299990021', `n${i}`);
    await waitFor(
      () => deliveries(gw, device.id, '&status=delivered'),
      (list) => list.length === 7,
      { what: '7 delivered (paired + 3 × sent and delivered)' },
    );
    const page = await gw.request('GET', `/devices/${device.id}/webhook-deliveries?page=2&per_page=3`);
    expect(page.body).toMatchObject({
      status: 200,
      message: 'Webhook deliveries retrieved successfully',
      meta: { page: 2, per_page: 3, total: 7 },
    });
    expect(page.body.data).toHaveLength(3);
    const all = await deliveries(gw, device.id);
    expect(page.body.data.map((d: any) => d.id)).toEqual(all.slice(3, 6).map((d) => d.id));
    expect(all.at(-1).type).toBe('device.paired');
    const sent = await deliveries(gw, device.id, '&type=message.sent');
    expect(sent).toHaveLength(3);
    expect(sent.every((d) => d.type === 'message.sent')).toBe(true);
    const bad = await gw.request('GET', `/devices/${device.id}/webhook-deliveries?status=lost`);
    expect(bad.status).toBe(400);
    expect(bad.body.message).toBe('Validation failed');
  });

  it('stops a pending delivery when the webhook URL is removed, with the reason in the log', async () => {
    const hooks = await receiver(() => 500);
    const device = await pairedWithWebhook(gw, nextPhone(), hooks.url);
    await waitForEvent(hooks, 'device.paired');
    await gw.request('PATCH', `/devices/${device.id}`, { webhook_url: null });
    const [stopped] = await waitFor(
      () => deliveries(gw, device.id),
      (list) => list[0]?.status === 'failed' && list[0].attempts.at(-1).url === null,
      { what: 'stopped' },
    );
    expect(stopped.attempts.at(-1)).toMatchObject({
      http_status: null,
      error: 'the device has no webhook_url; delivery stopped',
    });
  });

  it('rotates the secret: the device comes back with a new one; the old one keeps verifying for 24 h, then only the new', async () => {
    const hooks = await receiver();
    const phone = nextPhone();
    const device = await pairedWithWebhook(gw, phone, hooks.url);
    await waitForEvent(hooks, 'device.paired');
    const rotated = await gw.request('POST', `/devices/${device.id}/webhook-secret`);
    expect(rotated.status).toBe(200);
    expect(rotated.body).toMatchObject({ status: 200, message: 'Webhook secret rotated', data: { id: device.id } });
    const secret = rotated.body.data.webhook_secret as string;
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]+={0,2}$/);
    expect(secret).not.toBe(device.webhook_secret);
    expect((await gw.request('GET', `/devices/${device.id}`)).body.data.webhook_secret).toBe(secret);

    // Both signatures are sent, as Standard Webhooks allows: a receiver on either secret verifies.
    const id = await sendChat(gw, phone, '6287299990022');
    const request = await waitForEvent(hooks, 'message.sent', (e) => e.data.id === id);
    expect(String(request.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(verified(secret, request).data.id).toBe(id);
    expect(verified(device.webhook_secret, request).data.id).toBe(id);
    expect(() => verified('whsec_' + Buffer.alloc(24, 7).toString('base64'), request)).toThrow(/signature/i);
    expect(JSON.stringify((await gw.request('GET', `/devices/${device.id}`)).body)).not.toContain(
      device.webhook_secret,
    );

    // A second rotation keeps only the secret it replaced.
    const again = (await gw.request('POST', `/devices/${device.id}/webhook-secret`)).body.data.webhook_secret;
    const second = await sendChat(gw, phone, '6287299990022');
    const twice = await waitForEvent(hooks, 'message.sent', (e) => e.data.id === second);
    expect(verified(again, twice).data.id).toBe(second);
    expect(verified(secret, twice).data.id).toBe(second);
    expect(() => verified(device.webhook_secret, twice)).toThrow(/signature/i);

    // 24 h later (the overlap's end written as passed): the replaced secret signs no more.
    await gw.app.store.db
      .updateTable('devices')
      .set({ webhook_secret_previous_until: Date.now() - 1 })
      .where('id', '=', device.id)
      .execute();
    const third = await sendChat(gw, phone, '6287299990022');
    const late = await waitForEvent(hooks, 'message.sent', (e) => e.data.id === third);
    expect(String(late.headers['webhook-signature']).split(' ')).toHaveLength(1);
    expect(verified(again, late).data.id).toBe(third);
    expect(() => verified(secret, late)).toThrow(/signature/i);
  });
});

describe.skipIf(noStoreAvailable)('webhook retry times, on a clock the test moves', () => {
  let gw: TestGateway;
  const clock = new FakeClock(Date.now());
  /** The gateway's log lines (info and up): a receiver's pause is told there with its end. */
  const lines: string[] = [];
  const receivers = receiverPool();
  const receiver = receivers.start;
  let phones = 10;
  const nextPhone = () => `62872100000${phones++}`;

  beforeAll(async () => {
    gw = await startGateway({
      clock,
      config: { allowPrivateUrls: true, sendIntervalMs: 0 },
      build: {
        sandbox: { deliveryDelayMs: 5, readDelayMs: 5 },
        logger: { level: 'info', stream: { write: (line: string) => void lines.push(line) } },
        // No poll: the retries' own timers are the deliverer's only timers on the clock (the signal wakes it).
        webhooks: { ...quickWebhooks, retryScheduleMs: [50, 300], maxAgeMs: 1500, pollIntervalMs: 3_600_000 },
      },
    });
  });
  afterEach(async () => {
    await receivers.closeAll();
  });
  afterAll(() => gw?.close());

  /** The end of the device's receiver's latest pause (0: none), as the operator's log told it. */
  function pausedUntil(deviceId: number): number {
    const told = lines
      .map((line) => JSON.parse(line) as { msg: string; deviceId?: number; paused_until?: string })
      .filter((l) => l.deviceId === deviceId && l.msg.startsWith('webhook receiver keeps failing'))
      .map((l) => Date.parse(l.paused_until!));
    return Math.max(0, ...told);
  }

  /**
   * Waits for the delivery's `attempts`-th attempt to be recorded with a retry scheduled, and for the deliverer
   * to hold a timer on the clock for that time or sooner (the poll is an hour away), then moves the clock onto the
   * time the next attempt is due: the scheduled `next_attempt_at`, or the end of the receiver's pause if later (a
   * paused receiver is not tried before it; the schedule is cut at the give-up age, the pause is not). Answers the
   * scheduled time and the time the clock was moved to.
   */
  async function retryDue(deviceId: number, attempts: number): Promise<{ next: number; due: number }> {
    const [pending] = await waitFor(
      () => deliveries(gw, deviceId),
      (list) => list[0]?.attempts.length === attempts && list[0].next_attempt_at !== null,
      { what: `attempt ${attempts} recorded, the next scheduled` },
    );
    expect(pending.status).toBe('pending');
    const next = Date.parse(pending.next_attempt_at);
    expect(next).toBeGreaterThan(clock.now());
    await waitFor(
      () => clock.dueTimes,
      (times) => times.length > 0 && times[0]! <= next,
      { what: `a timer for the retry at ${iso(next)}` },
    );
    const due = Math.max(next, pausedUntil(deviceId));
    clock.set(due);
    return { next, due };
  }

  it('a receiver answering 500 then 200 gets the event twice, and the log shows both attempts', async () => {
    const hooks = await receiver((_request, n) => (n === 1 ? 500 : 200));
    const device = await pairedWithWebhook(gw, nextPhone(), hooks.url);
    const { next, due } = await retryDue(device.id, 1);
    expect(due).toBe(next);
    const [delivery] = await waitFor(
      () => deliveries(gw, device.id),
      (list) => list.length === 1 && list[0].status === 'delivered',
      { what: 'delivered after a retry' },
    );
    expect(delivery.type).toBe('device.paired');
    expect(delivery.attempts).toEqual([
      {
        attempted_at: delivery.created_at,
        url: hooks.url,
        http_status: 500,
        latency_ms: expect.any(Number),
        error: 'receiver answered HTTP 500: receiver says no',
        format: 'standard',
        reply: null,
      },
      {
        attempted_at: iso(due),
        url: hooks.url,
        http_status: 200,
        latency_ms: expect.any(Number),
        error: null,
        format: 'standard',
        reply: null,
      },
    ]);
    expect(hooks.byId(delivery.id)).toHaveLength(2);
    // Each attempt is signed afresh; both verify.
    for (const request of hooks.byId(delivery.id))
      expect(verified(device.webhook_secret, request).id).toBe(delivery.id);
    expect(delivery.delivered_at).not.toBeNull();
    expect(delivery.next_attempt_at).toBeNull();
  });

  it('a receiver that keeps failing: retried with backoff, then failed at the give-up age; a manual retry delivers it', async () => {
    const hooks = await receiver(() => 503);
    const device = await pairedWithWebhook(gw, nextPhone(), hooks.url);
    // Each retry at the time the log scheduled it, until the give-up age: the schedule is 50 ms then 300 ms
    // (± 20 %), the receiver is paused after 3 failures in a row (for 50 ms, then 300 ms), and nothing is scheduled
    // past created_at + 1500 ms.
    const retries: Array<{ next: number; due: number }> = [];
    for (let n = 1; ; n++) {
      const [current] = await waitFor(
        () => deliveries(gw, device.id),
        (list) => list[0]?.attempts.length === n && (list[0].status === 'failed' || list[0].next_attempt_at !== null),
        { what: `attempt ${n} recorded` },
      );
      if (current.status === 'failed') break;
      retries.push(await retryDue(device.id, n));
    }
    const [failed] = await deliveries(gw, device.id);
    const created = Date.parse(failed.created_at);
    const deadline = created + 1500;
    const times = failed.attempts.map((a: any) => Date.parse(a.attempted_at));
    // The first attempt at once; every retry exactly when it came due by the clock.
    expect(times).toEqual([created, ...retries.map((r) => r.due)]);
    // Each due as scheduled; the last scheduled at the deadline, tried then or at the end of a pause that outlasts it.
    const last = retries.at(-1)!;
    for (const r of retries.slice(0, -1)) expect(r.due).toBe(r.next);
    expect(last.next).toBe(deadline);
    expect(last.due).toBeGreaterThanOrEqual(deadline);
    expect(Date.parse(failed.failed_at)).toBe(last.due);
    expect(failed.attempts.every((a: any) => a.http_status === 503)).toBe(true);
    // The waits grow: the first is 50 ms ± 20 %, the next ones 300 ms ± 20 % (at least the 300 ms pause from
    // the fourth failure on); the last at most that long too.
    const gaps = times.slice(1).map((t: number, i: number) => t - times[i]!);
    expect(gaps[0]).toBeGreaterThanOrEqual(40);
    expect(gaps[0]).toBeLessThanOrEqual(60);
    for (const gap of gaps.slice(1, -1)) {
      expect(gap).toBeGreaterThanOrEqual(240);
      expect(gap).toBeLessThanOrEqual(360);
    }
    expect(gaps.at(-1)).toBeLessThanOrEqual(360);
    expect(gaps.length).toBeGreaterThanOrEqual(5);

    hooks.respond = () => 204;
    const retried = await gw.request('POST', `/devices/${device.id}/webhook-deliveries/${failed.id}/retry`);
    expect(retried.status).toBe(200);
    expect(retried.body).toMatchObject({
      status: 200,
      message: 'Delivery retry scheduled',
      data: { id: failed.id, status: 'pending' },
    });
    const [delivered] = await waitFor(
      () => deliveries(gw, device.id),
      (list) => list[0]?.status === 'delivered',
      { what: 'delivered by the manual retry' },
    );
    expect(delivered.failed_at).toBeNull();
    expect(delivered.attempts.at(-1)).toMatchObject({ http_status: 204, error: null });
    expect(delivered.attempts).toHaveLength(failed.attempts.length + 1);
  });

  it('a manual retry asked for while an attempt is in flight is not lost when that attempt fails for good', async () => {
    let release!: () => void;
    const held = new Promise<number>((resolve) => (release = () => resolve(500)));
    // An attempt that ends past the give-up age would mark the delivery failed; the request overrides it.
    const hooks = await receiver((_request, n) => (n === 1 ? held : 200));
    const device = await pairedWithWebhook(gw, nextPhone(), hooks.url);
    const first = await waitForEvent(hooks, 'device.paired');
    const id = first.headers['webhook-id'] as string;
    const res = await gw.request('POST', `/devices/${device.id}/webhook-deliveries/${id}/retry`);
    expect(res.status).toBe(200);
    // At the give-up age (maxAgeMs 1500) by the clock: the 500 is final.
    const [inFlight] = await deliveries(gw, device.id);
    clock.set(Date.parse(inFlight.created_at) + 1500);
    release();
    const [delivery] = await waitFor(
      () => deliveries(gw, device.id),
      (list) => list[0]?.status === 'delivered',
      { what: 'delivered by the retry asked for in flight' },
    );
    expect(delivery.attempts.map((a: any) => a.http_status)).toEqual([500, 200]);
    expect(delivery.failed_at).toBeNull();
  });
});
