// Issue 10 item 4: many parallel requests with one Idempotency-Key. The first
// one's answer is the answer of every other (they wait for it), one message is
// stored and sent, one unit of quota is taken; never a 500.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { idempotencyRepository } from '../../src/messages/idempotency-repository.js';
import { TEST_TOKEN, noStoreAvailable, startGateway, storeKind, type TestGateway } from '../helpers/gateway.js';
import { createPairedDevice } from '../helpers/pairing.js';
import { waitFor } from '../helpers/wait.js';

describe.skipIf(noStoreAvailable)('Idempotency-Key under concurrency', () => {
  let gw: TestGateway;
  let sender: string;
  let deviceId: number;
  beforeAll(async () => {
    gw = await startGateway({
      build: { sandbox: { deliveryDelayMs: 5, readDelayMs: 5 } },
      config: { sendIntervalMs: 0 },
    });
    const device = await createPairedDevice(gw, '6281500000041');
    sender = device.phone;
    deviceId = device.id;
  });
  afterAll(() => gw?.close());

  const send = (body: Record<string, unknown>, key: string) =>
    gw.app
      .inject({
        method: 'POST',
        url: '/messages',
        headers: { authorization: `Bearer ${TEST_TOKEN}`, 'idempotency-key': key },
        payload: { device: sender, ...body },
      })
      .then((res) => ({ status: res.statusCode, body: res.json() }));
  const quotaUsed = async () => Number((await gw.request('GET', `/devices/${deviceId}`)).body.data.quote_used);
  const inbox = async (phone: string) =>
    ((await gw.request('GET', `/sandbox/phones/${phone}`)).body.data?.inbox ?? []) as any[];

  it('answers 50 parallel POSTs with one key with the same 200, storing and sending one message', async () => {
    const before = await quotaUsed();
    const body = { receiver: '6281599990041', type: 'chat', params: { text: 'exactly once' } };
    const answers = await Promise.all(Array.from({ length: 50 }, () => send(body, 'race-1')));
    const statuses = answers.map((a) => a.status);
    expect(
      statuses.filter((s) => s !== 200),
      JSON.stringify(answers.find((a) => a.status !== 200)),
    ).toEqual([]);
    const ids = new Set(answers.map((a) => a.body.data.id));
    expect(ids.size).toBe(1);
    for (const answer of answers) expect(answer.body).toEqual(answers[0]!.body);
    expect(await quotaUsed()).toBe(before + 1);
    const [id] = [...ids];
    await waitFor(
      () => inbox('6281599990041'),
      (entries) => entries.some((e) => e.message_id === id),
      { what: 'the message in the inbox', timeoutMs: 10_000 },
    );
    expect((await inbox('6281599990041')).filter((e) => e.message_id === id)).toHaveLength(1);
    const listed = (await gw.request('GET', `/messages?device=${sender}&limit=100`)).body.data as any[];
    expect(listed.filter((m) => m.receiver === '6281599990041')).toHaveLength(1);
  });

  it('answers 409 Idempotency key reuse, never 500, to parallel requests with one key and different bodies', async () => {
    const before = await quotaUsed();
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        send({ receiver: '6281599990042', type: 'chat', params: { text: `body ${i % 3}` } }, 'race-2'),
      ),
    );
    const ok = answers.filter((a) => a.status === 200);
    const refused = answers.filter((a) => a.status !== 200);
    expect(refused.every((a) => a.status === 409 && a.body.message === 'Idempotency key reuse')).toBe(true);
    // Every 200 is the first request's answer; the others are the ones with its body.
    expect(new Set(ok.map((a) => a.body.data.id)).size).toBe(1);
    const text = ok[0]!.body.data.message as string;
    expect(ok.length).toBe(10);
    expect(text).toMatch(/^body [012]$/);
    expect(await quotaUsed()).toBe(before + 1);
  });

  it('lets parallel requests with distinct keys through, each once', async () => {
    const before = await quotaUsed();
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        send({ receiver: '6281599990043', type: 'chat', params: { text: `n ${i % 20}` } }, `distinct-${i % 20}`),
      ),
    );
    expect(answers.every((a) => a.status === 200)).toBe(true);
    expect(new Set(answers.map((a) => a.body.data.id)).size).toBe(20);
    expect(await quotaUsed()).toBe(before + 20);
  });
});

// Two processes sharing PostgreSQL claim one key at the same moment: the second waits for the first's commit
// and gets its stored answer (not a unique-constraint 500).
describe.skipIf(noStoreAvailable || storeKind !== 'postgres')('Idempotency-Key claimed by two transactions', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway();
  });
  afterAll(() => gw?.close());

  it('makes the second claim wait for the first commit and answer its stored response', async () => {
    const { db } = gw.app.store;
    let releaseFirst!: () => void;
    const firstHolds = new Promise<void>((resolve) => (releaseFirst = resolve));
    let firstClaimed!: () => void;
    const claimed = new Promise<void>((resolve) => (firstClaimed = resolve));
    const first = db.transaction().execute(async (trx) => {
      const claim = await idempotencyRepository.claimIdempotencyKey(trx, 1, 'two-nodes', 'hash-a', Date.now(), 0);
      firstClaimed();
      await firstHolds;
      await idempotencyRepository.saveIdempotentResponse(trx, 1, 'two-nodes', '{"code":200}');
      return claim;
    });
    await claimed;
    let secondDone = false;
    const second = db
      .transaction()
      .execute((trx) => idempotencyRepository.claimIdempotencyKey(trx, 1, 'two-nodes', 'hash-b', Date.now(), 0))
      .finally(() => (secondDone = true));
    // The second claim is held by the first transaction's uncommitted row.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(secondDone).toBe(false);
    releaseFirst();
    expect(await first).toEqual({ claimed: true });
    expect(await second).toEqual({ claimed: false, requestHash: 'hash-a', response: '{"code":200}' });
  });
});
