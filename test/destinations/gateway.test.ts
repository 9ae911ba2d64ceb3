// Brokers wired into a running gateway (docs/brokers.md): with GATEWAY_AMQP_URL and GATEWAY_NATS_URL set, the events
// of a real device (paired on the sandbox, sending a message) reach RabbitMQ and NATS JetStream exactly as the event
// log holds them, and GET /gateway and /metrics show each broker's state and backlog; a broker that cannot be
// reached shows as down with its backlog, while the other goes on. GET /gateway counts the caller's own events in that
// backlog, /metrics every account's. Real brokers; names of the test's own.
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { readLog } from '../../src/events/log.js';
import { devicesRepository } from '../../src/devices/repository.js';
import { recordMany } from '../events/log-helpers.js';
import {
  AMQP_URL,
  NATS_URL,
  amqpInbox,
  deleteStream,
  requireNats,
  requireRabbit,
  streamMessages,
  uniqueName,
} from '../helpers/brokers.js';
import { closedPort } from '../helpers/ports.js';
import { noStoreAvailable, startGateway, storeKind, type TestGateway } from '../helpers/gateway.js';
import { createPairedDevice } from '../helpers/pairing.js';
import { waitFor } from '../helpers/wait.js';

interface BrokerInfo {
  broker: string;
  state: string;
  backlog: number | null;
  published: number;
  last_error: string | null;
}

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function gateway(brokers: NonNullable<Parameters<typeof startGateway>[0]>['config']): Promise<TestGateway> {
  const gw = await startGateway({
    config: { sendIntervalMs: 0, ...brokers },
    build: { eventLog: { pollMs: 50 }, brokers: { retryBaseMs: 100, retryMaxMs: 500 } },
  });
  cleanups.push(() => gw.close());
  await gw.app.ready();
  return gw;
}

describe.skipIf(noStoreAvailable)(`brokers in the gateway (${storeKind})`, () => {
  beforeAll(async () => {
    await requireRabbit();
    await requireNats();
  });

  it('publishes a device’s events to both brokers as logged; /gateway and /metrics show them up with no backlog', async () => {
    const exchange = uniqueName('gw_test_ex');
    const stream = uniqueName('GW_TEST');
    const prefix = uniqueName('gwtest');
    const inbox = await amqpInbox(exchange);
    cleanups.push(() => inbox.close());
    cleanups.push(() => deleteStream(stream));
    const gw = await gateway({
      brokers: { amqp: { url: AMQP_URL, exchange }, nats: { url: NATS_URL, stream, subjectPrefix: prefix } },
    });
    const device = await createPairedDevice(gw, '6281100000011');
    const sent = await gw.request('POST', '/messages', {
      device: device.phone,
      receiver: '6281100000012',
      type: 'chat',
      params: { text: 'to the brokers' },
    });
    expect(sent.status, JSON.stringify(sent.body)).toBe(200);
    // The message's statuses (sent, delivered) are events of the device too.
    const logged = await waitFor(
      () => readLog(gw.app.store.db, null, {}, 1_000),
      (events) => events.some((e) => e.type === 'message.delivered'),
      { timeoutMs: 30_000, what: 'a message.delivered event in the log' },
    );
    expect(logged.map((e) => e.type)).toEqual(expect.arrayContaining(['device.paired', 'message.sent']));
    await waitFor(
      () => inbox.messages.length,
      (n) => n >= logged.length,
      {
        timeoutMs: 30_000,
        what: `${logged.length} messages on RabbitMQ`,
      },
    );
    const first = logged.length;
    const published = inbox.messages.slice(0, first);
    expect(published.map((m) => m.properties.messageId)).toEqual(logged.map((e) => e.id));
    expect(published.map((m) => m.fields.routingKey)).toEqual(logged.map((e) => `${device.id}.${e.type}`));
    expect(published.map((m) => m.content.toString())).toEqual(logged.map((e) => e.body));
    const onStream = (await streamMessages(stream, first)).slice(0, first);
    expect(onStream.map((m) => m.headers?.get('Nats-Msg-Id'))).toEqual(logged.map((e) => e.id));
    expect(onStream.map((m) => m.subject)).toEqual(logged.map((e) => `${prefix}.${device.id}.${e.type}`));
    expect(onStream.map((m) => m.string())).toEqual(logged.map((e) => e.body));

    const all = await readLog(gw.app.store.db, null, {}, 1_000);
    const info = await waitFor(
      async () => (await gw.request('GET', '/gateway')).body.data.brokers,
      (brokers: BrokerInfo[]) => brokers.every((b) => b.backlog === 0),
      { timeoutMs: 30_000, what: 'no backlog' },
    );
    expect(info).toEqual([
      { broker: 'amqp', state: 'up', backlog: 0, published: expect.any(Number), last_error: null },
      { broker: 'nats', state: 'up', backlog: 0, published: expect.any(Number), last_error: null },
    ]);
    expect(info[0]?.published).toBeGreaterThanOrEqual(all.length);
    const metrics = (await gw.request('GET', '/metrics')).body as string;
    expect(metrics).toContain('gateway_broker_up{broker="amqp",state="up"} 1');
    expect(metrics).toContain('gateway_broker_up{broker="nats",state="up"} 1');
    expect(metrics).toContain('gateway_broker_backlog_events{broker="amqp"} 0');
    expect(metrics).toMatch(/gateway_broker_published_events\{broker="nats"\} [1-9]/);
  });

  it('a broker that cannot be reached shows as down with the caller’s backlog; the other publishes on', async () => {
    const stream = uniqueName('GW_TEST');
    const prefix = uniqueName('gwtest');
    cleanups.push(() => deleteStream(stream));
    const port = await closedPort();
    const gw = await gateway({
      brokers: {
        amqp: { url: `amqp://guest:guest@127.0.0.1:${port}`, exchange: uniqueName('gw_test_ex') },
        nats: { url: NATS_URL, stream, subjectPrefix: prefix },
      },
    });
    await createPairedDevice(gw, '6281100000021');
    const logged = await readLog(gw.app.store.db, null, {}, 1_000);
    expect(logged.length).toBeGreaterThan(0);
    const brokers = await waitFor(
      async () => (await gw.request('GET', '/gateway')).body.data.brokers,
      (b: BrokerInfo[]) => b[0]?.state === 'down' && (b[0]?.backlog ?? 0) >= logged.length && b[1]?.backlog === 0,
      { timeoutMs: 30_000, what: 'amqp down with a backlog, nats caught up' },
    );
    expect(brokers[0]).toMatchObject({ broker: 'amqp', state: 'down', published: 0 });
    expect(brokers[0]?.last_error).toMatch(/ECONNREFUSED/);
    expect(brokers[1]).toMatchObject({ broker: 'nats', state: 'up', last_error: null });
    // Another account's events wait too: its own view counts only them, the caller's does not change, and the
    // operator's /metrics counts both.
    const other = await gw.app.services.accounts.createAccount('brokers-other');
    const otherToken = (await gw.app.services.accounts.createToken(other.id, 't')).token;
    const created = await gw.request('POST', '/devices', { package: 'BUSINESS', name: 'theirs' }, otherToken);
    const theirs = (await devicesRepository.findById(gw.app.store.db, created.body.data.id))!;
    await recordMany(gw.app.store.db, theirs, 5, (i) => ({ i }));
    const mine = (await readLog(gw.app.store.db, null, {}, 1_000)).filter((e) => e.accountId !== other.id).length;
    const amqpOf = async (token?: string) =>
      ((await gw.request('GET', '/gateway', undefined, token)).body.data.brokers as BrokerInfo[])[0];
    expect(await amqpOf()).toMatchObject({ broker: 'amqp', state: 'down', backlog: mine });
    expect(await amqpOf(otherToken)).toMatchObject({ broker: 'amqp', state: 'down', backlog: 5 });
    const metrics = (await gw.request('GET', '/metrics')).body as string;
    expect(metrics).toContain('gateway_broker_up{broker="amqp",state="down"} 0');
    expect(metrics).toContain(`gateway_broker_backlog_events{broker="amqp"} ${mine + 5}`);
  });
});
