// GET /gateway shows the caller's own event destinations (DECISIONS 17; docs/webhooks.md, Backlog and state;
// docs/events.md): each of its webhooks and each of its devices' own webhook_url with its backlog (deliveries not
// yet made) and state (ok, failing, disabled), its stream consumers open on this node, and the brokers' backlog of
// its own events; another account's never appear. /metrics keeps the gateway-wide figures. Counts are exact.
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { logReader } from '../../src/destinations/log-reader.js';
import { devicesRepository } from '../../src/devices/repository.js';
import { encodeCursor } from '../../src/events/log.js';
import type { EventDevice } from '../../src/events/record.js';
import { noStoreAvailable, startGateway, storeKind, TEST_TOKEN, type TestGateway } from '../helpers/gateway.js';
import { waitFor } from '../helpers/wait.js';
import { startReceiver, type Receiver } from '../events/helpers.js';
import { closeClients, openSse, openWs, recordMany } from '../events/log-helpers.js';

const N = 7;
const M = 3;

describe.skipIf(noStoreAvailable)(`each destination's backlog and state in GET /gateway (${storeKind})`, () => {
  let gw: TestGateway;
  let base: string;
  let otherToken: string;
  const receivers: Receiver[] = [];
  let ok: Receiver;
  let failing: Receiver;
  let hanging: Receiver;
  let mine: EventDevice;
  let theirs: EventDevice;
  const hooks: Record<string, string> = {};

  beforeAll(async () => {
    gw = await startGateway({
      config: { allowPrivateUrls: true },
      build: { webhooks: { retryScheduleMs: [600_000], timeoutMs: 60_000, closeGraceMs: 200 } },
    });
    await gw.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(gw.app.server.address() as AddressInfo).port}`;
    const other = await gw.app.services.accounts.createAccount('destinations-other');
    otherToken = (await gw.app.services.accounts.createToken(other.id, 't')).token;
    ok = await startReceiver(() => 200);
    failing = await startReceiver(() => 500);
    hanging = await startReceiver(() => 'hang');
    receivers.push(ok, failing, hanging);
    const device = async (token: string, name: string) => {
      const created = await gw.request('POST', '/devices', { package: 'BUSINESS', name }, token);
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      return (await devicesRepository.findById(gw.app.store.db, created.body.data.id))!;
    };
    mine = await device(TEST_TOKEN, 'mine');
    theirs = await device(otherToken, 'theirs');
    const webhook = async (token: string, body: Record<string, unknown>) => {
      const created = await gw.request('POST', '/webhooks', body, token);
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      return created.body.data.id as string;
    };
    hooks.ok = await webhook(TEST_TOKEN, { url: ok.url });
    hooks.failing = await webhook(TEST_TOKEN, { url: failing.url });
    hooks.disabled = await webhook(TEST_TOKEN, { url: ok.url.replace('/hooks', '/off'), enabled: false });
    hooks.hanging = await webhook(TEST_TOKEN, { url: hanging.url });
    hooks.theirs = await webhook(otherToken, { url: failing.url.replace('/hooks', '/theirs') });
  });
  afterAll(async () => {
    closeClients();
    await gw?.close();
    for (const receiver of receivers) await receiver.close();
  });

  const info = async (token = TEST_TOKEN) => {
    const res = await gw.request('GET', '/gateway', undefined, token);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.data;
  };

  it("webhooks: each of the caller's with its exact backlog and state; another account's never", async () => {
    await recordMany(gw.app.store.db, mine, N, (i) => ({ i }));
    await recordMany(gw.app.store.db, theirs, M, (i) => ({ i }));
    const host = (receiver: Receiver) => `127.0.0.1:${receiver.port}`;
    const webhooks = await waitFor(
      async () => (await info()).webhooks,
      (list: any[]) => list[0]?.backlog === 0 && list[1]?.state === 'failing' && hanging.received.length > 0,
      { what: 'the healthy webhook caught up, the failing one failing', timeoutMs: 15_000 },
    );
    expect(webhooks).toEqual([
      { id: hooks.ok, host: host(ok), state: 'ok', backlog: 0 },
      { id: hooks.failing, host: host(failing), state: 'failing', backlog: N },
      { id: hooks.disabled, host: host(ok), state: 'disabled', backlog: 0 },
      // Its receiver holds the attempts in flight, failing none yet: every delivery still to be made.
      { id: hooks.hanging, host: host(hanging), state: 'ok', backlog: N },
    ]);
    expect(ok.received).toHaveLength(N);
    const theirView = await waitFor(
      async () => (await info(otherToken)).webhooks,
      (list: any[]) => list[0]?.state === 'failing',
      { what: 'their webhook failing' },
    );
    expect(theirView).toEqual([{ id: hooks.theirs, host: host(failing), state: 'failing', backlog: M }]);
    // The operator's figure: every account's deliveries not yet made.
    const metrics = (await gw.request('GET', '/metrics')).body as string;
    expect(metrics).toContain(`gateway_webhook_backlog_deliveries ${2 * N + M}`);
  });

  it("streams: the caller's consumers open on this node, by kind; another account's never", async () => {
    expect((await info()).streams).toEqual({ sse: 0, websocket: 0 });
    const ws = base.replace('http', 'ws');
    await openSse(`${base}/events/stream`, { authorization: `Bearer ${TEST_TOKEN}` });
    await openSse(`${base}/events/stream?device=${mine.id}`, { authorization: `Bearer ${TEST_TOKEN}` });
    await openWs(`${ws}/events/ws`, { protocols: [`bearer.${TEST_TOKEN}`] });
    await openSse(`${base}/events/stream`, { authorization: `Bearer ${otherToken}` });
    await openWs(`${ws}/events/ws`, { protocols: [`bearer.${otherToken}`] });
    await openWs(`${ws}/events/ws`, { protocols: [`bearer.${otherToken}`] });
    await waitFor(
      () => gw.app.services.eventLog.streams.size,
      (n) => n === 6,
      { what: 'six consumers open' },
    );
    expect((await info()).streams).toEqual({ sse: 2, websocket: 1 });
    expect((await info(otherToken)).streams).toEqual({ sse: 1, websocket: 2 });
    closeClients();
    await waitFor(
      async () => (await info()).streams,
      (s: any) => s.sse === 0 && s.websocket === 0,
      { what: 'the consumers gone' },
    );
  });

  it("the brokers' backlog counts only the account's events (exact); every account's without one", async () => {
    const reader = logReader(gw.app.store.db);
    const count = async (accountId?: number) => {
      let query = gw.app.store.db.selectFrom('events').select((eb) => eb.fn.countAll<number | string>().as('n'));
      if (accountId !== undefined) query = query.where('account_id', '=', accountId);
      return Number((await query.executeTakeFirstOrThrow()).n);
    };
    expect(await reader.backlog(null, mine.account_id)).toBe(await count(mine.account_id));
    expect(await reader.backlog(null, theirs.account_id)).toBe(M);
    expect(await reader.backlog(null)).toBe(await count());
    // After a cursor: only what follows it.
    const [first] = await recordMany(gw.app.store.db, theirs, 1, () => ({ after: true }));
    const cursor = (await gw.app.store.db
      .selectFrom('events')
      .select(['xact', 'seq'])
      .where('id', '=', first!)
      .executeTakeFirstOrThrow()) as { xact: number | string; seq: number | string };
    const at = encodeCursor(Number(cursor.xact), Number(cursor.seq));
    await recordMany(gw.app.store.db, mine, 2, () => ({ later: true }));
    await recordMany(gw.app.store.db, theirs, 4, () => ({ later: true }));
    expect(await reader.backlog(at, theirs.account_id)).toBe(4);
    expect(await reader.backlog(at, mine.account_id)).toBe(2);
    expect(await reader.backlog(at)).toBe(6);
    // No broker configured here: the list is empty for every account.
    expect((await info()).brokers).toEqual([]);
  });

  it("devices' own webhook_url: each with its exact backlog and state, in device order; another account's never", async () => {
    const withUrl = async (token: string, name: string, url: string | null) => {
      const created = await gw.request('POST', '/devices', { package: 'BUSINESS', name }, token);
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      const id = created.body.data.id as number;
      if (url !== null) {
        const patched = await gw.request('PATCH', `/devices/${id}`, { webhook_url: url }, token);
        expect(patched.status, JSON.stringify(patched.body)).toBe(200);
      }
      return (await devicesRepository.findById(gw.app.store.db, id))!;
    };
    const good = await withUrl(TEST_TOKEN, 'own url answering', `${ok.url}/device`);
    const bad = await withUrl(TEST_TOKEN, 'own url failing', `${failing.url}/device`);
    const none = await withUrl(TEST_TOKEN, 'no url', null);
    const their = await withUrl(otherToken, 'their own url', `${failing.url}/their-device`);
    await recordMany(gw.app.store.db, good, 4, (i) => ({ i }));
    await recordMany(gw.app.store.db, bad, 5, (i) => ({ i }));
    await recordMany(gw.app.store.db, none, 3, (i) => ({ i }));
    await recordMany(gw.app.store.db, their, 2, (i) => ({ i }));
    const host = (receiver: Receiver) => `127.0.0.1:${receiver.port}`;
    const mineNow = await waitFor(
      async () => (await info()).device_webhooks,
      (list: any[]) => list[0]?.backlog === 0 && list[1]?.state === 'failing',
      { what: 'the answering device URL caught up, the failing one failing' },
    );
    expect(mineNow).toEqual([
      { device: good.id, host: host(ok), state: 'ok', backlog: 0 },
      { device: bad.id, host: host(failing), state: 'failing', backlog: 5 },
    ]);
    // Its backlog is 0 because its four were delivered (to its own URL: rows with no account webhook).
    const delivered = await gw.app.store.db
      .selectFrom('webhook_events')
      .select('status')
      .where('device_id', '=', good.id)
      .where('webhook_id', 'is', null)
      .execute();
    expect(delivered.map((r) => r.status)).toEqual(['delivered', 'delivered', 'delivered', 'delivered']);
    const theirView = await waitFor(
      async () => (await info(otherToken)).device_webhooks,
      (list: any[]) => list[0]?.state === 'failing',
      { what: 'their device URL failing' },
    );
    expect(theirView).toEqual([{ device: their.id, host: host(failing), state: 'failing', backlog: 2 }]);
    // Clearing a device's URL removes it from the list.
    expect((await gw.request('PATCH', `/devices/${bad.id}`, { webhook_url: null })).status).toBe(200);
    expect((await info()).device_webhooks).toEqual([{ device: good.id, host: host(ok), state: 'ok', backlog: 0 }]);
  });
});
