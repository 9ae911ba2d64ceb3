// docs/internals.md, Webhooks with several gateway processes on one PostgreSQL store: both
// deliverers claim from the same queue (leases, FOR UPDATE SKIP LOCKED), and a
// healthy receiver gets every event exactly once. (SQLite is one process.)
import { afterAll, describe, expect, it } from 'vitest';
import { recordEvent } from '../../src/events/record.js';
import { devicesRepository } from '../../src/devices/repository.js';
import { noStoreAvailable, startGateway, storeKind, type TestGateway } from '../helpers/gateway.js';
import { waitFor } from '../helpers/wait.js';
import { startReceiver, type Receiver } from './helpers.js';

describe.skipIf(noStoreAvailable || storeKind !== 'postgres')('two gateways sharing a store', () => {
  const open: Array<{ close(): Promise<unknown> }> = [];
  afterAll(async () => {
    for (const thing of open.reverse()) await thing.close();
  });

  it('deliver every event once between them', async () => {
    const hooks: Receiver = await startReceiver();
    open.push(hooks);
    const build = { webhooks: { pollIntervalMs: 20, perDeviceConcurrency: 8 } };
    const config = { allowPrivateUrls: true };
    const a: TestGateway = await startGateway({ config, build });
    const b: TestGateway = await startGateway({ location: a.location, config, build });
    // b closes first and keeps the store for a, which drops it.
    open.push(a, { close: () => b.close({ keepStore: true }) });

    const ids = [];
    for (let d = 0; d < 3; d++) {
      const created = await a.request('POST', '/devices', { package: 'BETA', name: `shared ${d}` });
      await a.request('PATCH', `/devices/${created.body.data.id}`, { webhook_url: hooks.url });
      const device = (await devicesRepository.findById(a.app.store.db, created.body.data.id))!;
      // Recorded as a state change would record them, without waking either deliverer: both find them by polling.
      for (let i = 0; i < 100; i++) {
        ids.push(await recordEvent(a.app.store.db, device, 'message.sent', { n: i }, Date.now()));
      }
    }
    await Promise.all([a.app.ready(), b.app.ready()]);

    await waitFor(
      () => new Set(hooks.received.map((r) => r.headers['webhook-id'])).size,
      (n) => n === 300,
      { what: 'all 300 delivered', timeoutMs: 10_000 },
    );
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(hooks.received).toHaveLength(300);
    expect(new Set(hooks.received.map((r) => r.headers['webhook-id']))).toEqual(new Set(ids));
    const attempts = await a.app.store.db.selectFrom('webhook_attempts').select('event_id').execute();
    expect(attempts).toHaveLength(300);
  });
});
