// A device with no send interval sends its queue in runs (src/dispatch/lane.ts runOf, dispatcher.ts sendRun): the
// due heads claimed in one statement, sent one after another, their outcomes committed together. What a run
// claimed and never tried (a retry ended the run before it) is released, so a cancel may still end it; a message
// cancelled before the claim is skipped, never sent; order holds across the retry.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { actionsRepository } from '../../src/messages/actions-repository.js';
import { noStoreAvailable, startGateway, type TestGateway } from '../helpers/gateway.js';
import { createPairedDevice } from '../helpers/pairing.js';
import { waitFor } from '../helpers/wait.js';

const HOUR = 3_600_000;

describe.skipIf(noStoreAvailable)('sending a queue in runs', () => {
  let gw: TestGateway;
  const clock = new ManualClock(Date.now());
  beforeAll(async () => {
    gw = await startGateway({
      clock,
      config: { sendIntervalMs: 0 },
      build: { dispatch: { retryBaseMs: HOUR, retryMaxMs: HOUR } },
    });
  });
  afterAll(() => gw?.close());

  const row = (id: string) =>
    gw.app.store.db
      .selectFrom('messages')
      .select(['status', 'attempts', 'claimed_at', 'failed_reason'])
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
  const post = async (device: string, receiver: string, text: string) => {
    const res = await gw.request('POST', '/messages', { device, receiver, type: 'chat', params: { text } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.data.id as string;
  };
  const inboxTexts = async (phone: string): Promise<string[]> =>
    ((await gw.request('GET', `/sandbox/phones/${phone}`)).body.data?.inbox ?? []).map((e: any) => e.content.text);
  /** A device that holds its queue (an hour between sends) after its first message went. */
  const holding = async (phone: string, friend: string) => {
    const device = await createPairedDevice(gw, phone);
    expect((await gw.request('PATCH', `/devices/${device.id}`, { send_interval_ms: HOUR })).status).toBe(200);
    const first = await post(device.phone, friend, 'first');
    await waitFor(
      () => row(first),
      (r) => r.status !== 'pending',
      { what: 'the first message sent' },
    );
    return device;
  };

  it('a retried head ends its run: what the run claimed behind it is released, can be cancelled, and waits in order', async () => {
    const friend = '6281588310707';
    // The sandbox's rate-limited number: the first attempt of each message to it fails transiently.
    const limited = '6281588310004';
    const device = await holding('6281588310001', friend);
    // Read alone while the lane waits out the interval; the three after it are read, and run, together.
    const before = await post(device.phone, friend, 'before');
    const head = await post(device.phone, limited, 'head');
    const second = await post(device.phone, friend, 'second');
    const third = await post(device.phone, friend, 'third');
    // No interval any more: the lane takes head, second and third as one run.
    expect((await gw.request('PATCH', `/devices/${device.id}`, { send_interval_ms: 0 })).status).toBe(200);
    await waitFor(
      () => row(head),
      (r) => r.attempts === 1,
      { what: 'the head retried' },
    );
    for (const id of [second, third]) {
      await waitFor(
        () => row(id),
        (r) => r.claimed_at === null,
        { what: `the claim of ${id} released` },
      );
    }
    const cancel = await gw.request('DELETE', `/messages/${second}`);
    expect(cancel.body.message).toBe('Message cancelled');
    expect(await row(third)).toMatchObject({ status: 'pending' });
    expect((await row(before)).status).not.toBe('pending');
    expect(await inboxTexts(friend)).not.toContain('third');

    // The retry's time comes: the head goes, then the third; the cancelled one never.
    clock.advance(3 * HOUR);
    gw.app.services.dispatcher.deviceChanged(device.id);
    await waitFor(
      () => row(third),
      (r) => r.status !== 'pending',
      { what: 'the third message sent' },
    );
    expect((await row(head)).status).not.toBe('pending');
    expect(await row(second)).toMatchObject({ status: 'failed', failed_reason: 'cancelled' });
    // The phone shows a message once the network delivered it, a moment after `sent`.
    const texts = await waitFor(
      () => inboxTexts(friend),
      (t) => t.includes('third'),
      { what: 'the third message in the inbox' },
    );
    expect(texts).toEqual(['first', 'before', 'third']);
  });

  it('one claim for a run: a message cancelled first is not taken, the others are, and released ones are cancellable', async () => {
    const friend = '6281588320707';
    const device = await holding('6281588320001', friend);
    const [a, b, c] = [
      await post(device.phone, friend, 'a'),
      await post(device.phone, friend, 'b'),
      await post(device.phone, friend, 'c'),
    ];
    expect((await gw.request('DELETE', `/messages/${b}`)).body.message).toBe('Message cancelled');
    const db = gw.app.store.db;
    const run = await db.selectFrom('messages').select(['id', 'seq']).where('id', 'in', [a, b, c]).execute();
    expect([...(await actionsRepository.claimMany(db, device.id, run, clock.now()))].sort()).toEqual([a, c].sort());
    for (const id of [a, c]) expect((await gw.request('DELETE', `/messages/${id}`)).status).toBe(400);
    await actionsRepository.unclaim(db, [c]);
    expect((await gw.request('DELETE', `/messages/${c}`)).body.message).toBe('Message cancelled');
    expect(await row(a)).toMatchObject({ status: 'pending' });
  });
});
