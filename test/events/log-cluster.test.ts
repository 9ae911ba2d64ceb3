// The event log in a cluster (docs/events.md; DECISIONS 17): any node serves the streams and sees every node's
// events, woken by PostgreSQL's notification from the log table's trigger (013d), not by polling.
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { devicesRepository } from '../../src/devices/repository.js';
import { noStoreAvailable, startGateway, storeKind, TEST_TOKEN, type TestGateway } from '../helpers/gateway.js';
import { waitFor } from '../helpers/wait.js';
import { closeClients, openSse, openWs, recordMany } from './log-helpers.js';

describe.skipIf(noStoreAvailable || storeKind !== 'postgres')('event streams on two nodes sharing a store', () => {
  const open: Array<{ close(): Promise<unknown> }> = [];
  afterAll(async () => {
    closeClients();
    for (const thing of open.reverse()) await thing.close();
  });

  it('a consumer on one node gets the events recorded on the other, at once, in order', async () => {
    // The head poll of both is an hour: only the notification can wake the consumer's node in time.
    const build = { eventLog: { pollMs: 3_600_000 } };
    const a: TestGateway = await startGateway({ build, config: { serverName: 'node-a' } });
    const b: TestGateway = await startGateway({ location: a.location, build, config: { serverName: 'node-b' } });
    open.push(a, { close: () => b.close({ keepStore: true }) });
    await Promise.all([a.app.ready(), b.app.ready()]);
    await b.app.listen({ port: 0, host: '127.0.0.1' });
    const base = `http://127.0.0.1:${(b.app.server.address() as AddressInfo).port}`;

    const created = await a.request('POST', '/devices', { package: 'BETA', name: 'on a' });
    const device = (await devicesRepository.findById(a.app.store.db, created.body.data.id))!;
    const sse = await openSse(`${base}/events/stream?device=${device.id}`, { authorization: `Bearer ${TEST_TOKEN}` });
    const ws = await openWs(`${base.replace('http', 'ws')}/events/ws?device=${device.id}`, {
      protocols: [`bearer.${TEST_TOKEN}`],
    });
    // Let B's listener connect (it looks at the log once it has).
    await waitFor(
      () => b.app.services.eventLog.watch.followers,
      (n) => n === 2,
      { what: 'both consumers following' },
    );
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push(...(await recordMany(a.app.store.db, device, 3, (j) => ({ i, j }))));
    // A read that a notification woke may find the last rows held a moment behind another test's open transaction
    // on this server; a later event's notification (a nudge, every half second) wakes it again.
    let probes = 0;
    await waitFor(
      async () => {
        if (++probes % 50 === 0) await recordMany(a.app.store.db, device, 1, () => ({ nudge: true }));
        return Math.min(sse.frames.length, ws.frames.length);
      },
      (n) => n >= 15,
      { what: 'node b’s consumers to get node a’s events', timeoutMs: 10_000 },
    );
    expect(sse.frames.slice(0, 15).map((f) => JSON.parse(f.data!).id)).toEqual(ids);
    expect(ws.frames.slice(0, 15).map((f) => f.event.id)).toEqual(ids);
  }, 60_000);
});
