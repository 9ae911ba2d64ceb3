// The account's webhooks as recording sees them (src/events/destinations.ts): a change made through this
// gateway is seen by the next event at once; one made elsewhere (another node of a cluster, written straight to
// the store here) within WEBHOOKS_TTL_MS, never later.
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { noStoreAvailable, startGateway, type TestGateway } from '../helpers/gateway.js';
import { WEBHOOKS_TTL_MS, accountWebhooks } from '../../src/events/destinations.js';

describe.skipIf(noStoreAvailable)('the account webhooks recording sees', () => {
  let gw: TestGateway;
  let accountId: number;
  beforeAll(async () => {
    gw = await startGateway({ config: { allowPrivateUrls: true } });
    const id = (await gw.request('POST', '/devices', { package: 'BUSINESS', name: 'd' })).body.data.id;
    const row = await gw.app.store.db
      .selectFrom('devices')
      .select('account_id')
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    accountId = Number(row.account_id);
  });
  afterAll(async () => {
    await gw?.close();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('sees a change through the API at once, and one made elsewhere within the TTL', async () => {
    const { db } = gw.app.store;
    // Only Date is faked, and it stands still: a slow machine cannot run the TTL out between two steps.
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() });
    expect(await accountWebhooks(db, accountId)).toEqual([]);
    const created = await gw.request('POST', '/webhooks', { url: 'http://127.0.0.1:9/a', events: ['message.sent'] });
    expect(created.status).toBe(201);
    const seen = await accountWebhooks(db, accountId);
    expect(seen.map((h) => [h.id, h.url, [...(h.events ?? [])]])).toEqual([
      [created.body.data.id, 'http://127.0.0.1:9/a', ['message.sent']],
    ]);

    // Another node disables it: this one keeps its copy until the TTL runs out, then reads the store again.
    await db.updateTable('webhooks').set({ enabled: 0 }).where('id', '=', created.body.data.id).execute();
    expect(await accountWebhooks(db, accountId)).toHaveLength(1);
    vi.setSystemTime(Date.now() + WEBHOOKS_TTL_MS);
    expect(await accountWebhooks(db, accountId)).toEqual([]);

    // Enabled again through the API: seen at once.
    expect((await gw.request('PATCH', `/webhooks/${created.body.data.id}`, { enabled: true })).status).toBe(200);
    expect(await accountWebhooks(db, accountId)).toHaveLength(1);
  });
});
