// The broker drivers over the real event log and the real brokers (docs/brokers.md): events go out in log order
// from the stored cursor, which moves only after the broker's confirmation; an outage under a steady flow of events
// loses nothing, keeps each device's order and repeats only ids a consumer has seen; one driver per broker publishes
// while another stands by and takes over when the first stops. Run on both stores.
//
// The 20 s outages are the injected clock's: a driver's only waits are its backoff timers on that clock, so the test
// moves it 20 s (in steps) while the broker is away, with events appended in real time all along. The broker really
// is away: a TCP proxy the test cuts (RabbitMQ) or a nats-server of the test's own, stopped and started (NATS).
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import pino from 'pino';
import type { FastifyBaseLogger } from 'fastify';
import { FakeClock } from '../../src/clock.js';
import { AmqpPublisher } from '../../src/destinations/amqp.js';
import { BrokerDriver } from '../../src/destinations/driver.js';
import { brokerCursors } from '../../src/destinations/cursors-repository.js';
import { logReader } from '../../src/destinations/log-reader.js';
import { NatsPublisher } from '../../src/destinations/nats.js';
import type { Publisher } from '../../src/destinations/publisher.js';
import { LogWatch } from '../../src/events/log-follow.js';
import { EventSignal } from '../../src/events/signal.js';
import { openStore, type Store } from '../../src/store/store.js';
import {
  AMQP_URL,
  amqpInbox,
  deleteStream,
  ownNats,
  requireNats,
  requireRabbit,
  streamMessages,
  tcpProxy,
  uniqueName,
  type AmqpInbox,
} from '../helpers/brokers.js';
import { closedPort } from '../helpers/ports.js';
import { newStoreLocation, noStoreAvailable, type StoreLocation } from '../helpers/gateway.js';
import { waitFor } from '../helpers/wait.js';

const logger = pino({ level: 'silent' }) as unknown as FastifyBaseLogger;
const DEVICES = [11, 12, 13];

let location: StoreLocation;
let store: Store;
let clock: FakeClock;
let signal: EventSignal;
let watch: LogWatch;
const cleanups: (() => Promise<unknown>)[] = [];
/** Event ids in the order they were appended. */
let appended: { id: string; deviceId: number }[];

beforeEach(async () => {
  location = await newStoreLocation();
  store = openStore({ databaseUrl: location.databaseUrl, dataDir: location.dataDir });
  await store.migrate();
  clock = new FakeClock(Date.UTC(2026, 0, 1));
  signal = new EventSignal();
  watch = new LogWatch({ db: store.db, signal, clock, logger });
  appended = [];
});
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  watch.stop();
  await store.close();
  await location.drop();
});

/** Appends `count` events, round robin over the devices, each in its own transaction, and rings as a writer does. */
async function append(count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    const n = appended.length;
    const deviceId = DEVICES[n % DEVICES.length] as number;
    const id = `evt_${n}_${uniqueName('e')}`;
    const body = JSON.stringify({ id, type: 'message.status', device: deviceId, created_at: 'x', data: { n } });
    await store.db
      .insertInto('events')
      .values({ id, account_id: 1, device_id: deviceId, type: 'message.status', payload: body, created_at: n })
      .execute();
    appended.push({ id, deviceId });
    signal.ring();
  }
}

function driverFor(publisher: Publisher, holder = 'node-a'): BrokerDriver {
  const driver = new BrokerDriver({
    publisher,
    store,
    log: logReader(store.db),
    clock,
    logger,
    holder,
    batchSize: 50,
    retryBaseMs: 500,
    retryMaxMs: 4_000,
    random: () => 1,
  });
  const unsubscribe = watch.subscribe(driver.wake);
  cleanups.push(async () => {
    unsubscribe();
    await driver.stop();
  });
  driver.start();
  return driver;
}

/** The received ids with repeats of an id already seen dropped: what a consumer that drops by id keeps. */
function deduplicated(ids: readonly string[]): { kept: string[]; repeats: number } {
  const seen = new Set<string>();
  const kept: string[] = [];
  for (const id of ids) {
    if (seen.has(id)) continue;
    seen.add(id);
    kept.push(id);
  }
  return { kept, repeats: ids.length - kept.length };
}

function expectEverythingInOrder(received: readonly string[]): number {
  const { kept, repeats } = deduplicated(received);
  // Every event, each once after dropping repeats, in log order (so in order per device).
  expect(kept).toEqual(appended.map((e) => e.id));
  for (const device of DEVICES) {
    const ofDevice = appended.filter((e) => e.deviceId === device).map((e) => e.id);
    expect(kept.filter((id) => ofDevice.includes(id))).toEqual(ofDevice);
  }
  return repeats;
}

/**
 * waitFor, moving the clock a second per look: the event log's watch polls on it. On PostgreSQL an event whose ring
 * came while an older transaction of the server was still open is behind the read horizon then, and found by that
 * poll (src/events/log.ts); on the system clock the poll runs by itself.
 */
function waitMoving<T>(
  probe: () => Promise<T> | T,
  accept: (value: T) => boolean,
  options: { timeoutMs?: number; what?: string } = {},
): Promise<T> {
  return waitFor(
    () => {
      clock.advance(1_000);
      return probe();
    },
    accept,
    { intervalMs: 50, timeoutMs: 30_000, ...options },
  );
}

/** Moves the clock `ms` in steps of a second, appending events between steps: a steady flow during an outage. */
async function outage(ms: number, perStep: number): Promise<void> {
  for (let t = 0; t < ms; t += 1_000) {
    await append(perStep);
    clock.advance(1_000);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe.skipIf(noStoreAvailable)('RabbitMQ driver', () => {
  beforeAll(() => requireRabbit());

  async function rabbit(): Promise<{ inbox: AmqpInbox; proxy: Awaited<ReturnType<typeof tcpProxy>>; url: string }> {
    const exchange = uniqueName('gw_test_ex');
    const inbox = await amqpInbox(exchange);
    cleanups.push(() => inbox.close());
    const proxy = await tcpProxy('127.0.0.1', Number(new URL(AMQP_URL).port || 5672));
    cleanups.push(() => proxy.close());
    return { inbox, proxy, url: AMQP_URL.replace(/:\d+$/, `:${proxy.port}`) };
  }

  it('publishes the log in order and stores the cursor of the last confirmed event', async () => {
    const { inbox, url } = await rabbit();
    const exchange = inbox.exchange;
    const driver = driverFor(new AmqpPublisher({ url, exchange, clock }));
    await append(120);
    await waitMoving(
      () => inbox.messages.length,
      (n) => n >= 120,
      { timeoutMs: 20_000, what: '120 messages' },
    );
    expect(expectEverythingInOrder(inbox.messages.map((m) => m.properties.messageId as string))).toBe(0);
    expect(inbox.messages.map((m) => m.fields.routingKey).slice(0, 3)).toEqual([
      '11.message.status',
      '12.message.status',
      '13.message.status',
    ]);
    await driver.settled();
    const status = await driver.status();
    expect(status).toMatchObject({ broker: 'amqp', state: 'up', backlog: 0, published: 120, lastError: null });
    const last = (await logReader(store.db).read(null, 1_000)).at(-1);
    expect(await brokerCursors.cursor(store.db, 'amqp')).toBe(last?.cursor);
  });

  it('an outage of 20 s under a steady flow: every event arrives, in order per device, repeats only of seen ids', async () => {
    const { inbox, proxy, url } = await rabbit();
    const driver = driverFor(new AmqpPublisher({ url, exchange: inbox.exchange, clock }));
    await append(30);
    await waitMoving(
      () => inbox.messages.length,
      (n) => n >= 30,
      { timeoutMs: 20_000, what: 'the first 30' },
    );

    proxy.cut();
    await outage(20_000, 5);
    await waitMoving(
      () => driver.status(),
      (s) => s.state === 'down',
      { what: 'the driver to see RabbitMQ down' },
    );
    const during = await driver.status();
    expect(during.backlog).toBeGreaterThan(0);
    expect(during.lastError).not.toBeNull();

    proxy.restore();
    await append(20);
    // The next reconnect is due within the backoff's ceiling.
    clock.advance(4_000);
    await waitMoving(
      () => deduplicated(inbox.messages.map((m) => m.properties.messageId as string)).kept.length,
      (n) => n >= appended.length,
      { timeoutMs: 30_000, what: `all ${appended.length} events after the outage` },
    );
    expectEverythingInOrder(inbox.messages.map((m) => m.properties.messageId as string));
    await waitMoving(
      () => driver.status(),
      (s) => s.state === 'up' && s.backlog === 0,
      { what: 'no backlog' },
    );
  });

  it('retries a broker it cannot reach after a backoff on the injected clock: 0.5 s doubling to the ceiling', async () => {
    const port = await closedPort();
    const url = `amqp://guest:guest@127.0.0.1:${port}`;
    const driver = driverFor(new AmqpPublisher({ url, exchange: uniqueName('gw_test_ex'), clock }));
    let at = clock.now();
    await waitFor(
      () => driver.status(),
      (st) => st.state === 'down',
      { what: 'the first failed connect' },
    );
    expect((await driver.status()).lastError).toMatch(/ECONNREFUSED/);
    // retryBaseMs 500 doubled up to retryMaxMs 4,000 (jitter at its top: random() = 1).
    for (const wait of [500, 1_000, 2_000, 4_000, 4_000]) {
      await waitFor(
        () => clock.dueTimes,
        (due) => due.includes(at + wait),
        { what: `a retry due ${wait} ms later` },
      );
      at += wait;
      clock.advance(wait);
    }
  });

  it('one driver per broker: the second stands by, and takes over when the first stops', async () => {
    const { inbox, url } = await rabbit();
    const first = driverFor(new AmqpPublisher({ url, exchange: inbox.exchange, clock }), 'node-a');
    await first.settled();
    const second = driverFor(new AmqpPublisher({ url, exchange: inbox.exchange, clock }), 'node-b');
    await append(40);
    await waitMoving(
      () => inbox.messages.length,
      (n) => n >= 40,
      { timeoutMs: 20_000, what: '40 messages' },
    );
    await second.settled();
    expect((await second.status()).state).toBe('standby');
    expect((await second.status()).published).toBe(0);

    await first.stop();
    await append(10);
    // The second looks again a third of a lease later (the first let its lease go when it stopped).
    clock.advance(20_000);
    await waitMoving(
      () => inbox.messages.length,
      (n) => n >= 50,
      { timeoutMs: 20_000, what: '50 messages' },
    );
    expect(expectEverythingInOrder(inbox.messages.map((m) => m.properties.messageId as string))).toBe(0);
    // Counted once the cursor moved, just after the broker's confirmation.
    await waitMoving(
      () => second.status(),
      (s) => s.state === 'up' && s.published === 10 && s.backlog === 0,
      {
        what: 'the second to have published the 10',
      },
    );
  });
});

describe.skipIf(noStoreAvailable)('NATS JetStream driver', () => {
  beforeAll(() => requireNats());

  it('a nats-server stopped for 20 s under a steady flow: the stream holds every event once, in order', async () => {
    const nats = await ownNats();
    cleanups.push(() => nats.destroy());
    await nats.start();
    const stream = uniqueName('GW_TEST');
    const prefix = uniqueName('gwtest');
    const driver = driverFor(new NatsPublisher({ url: nats.url, stream, subjectPrefix: prefix, clock }));
    await append(30);
    await waitMoving(
      () => driver.status(),
      (s) => s.backlog === 0,
      { timeoutMs: 20_000, what: 'the first 30' },
    );

    await nats.stop();
    await outage(20_000, 5);
    await waitMoving(
      () => driver.status(),
      (s) => s.state === 'down',
      { what: 'the driver to see NATS down' },
    );
    expect((await driver.status()).backlog).toBeGreaterThan(0);

    await nats.start();
    await append(20);
    clock.advance(4_000);
    await waitMoving(
      () => driver.status(),
      (s) => s.state === 'up' && s.backlog === 0,
      {
        timeoutMs: 30_000,
        what: 'every event published after the outage',
      },
    );
    const messages = await streamMessages(stream, appended.length, nats.url);
    const ids = messages.map((m) => m.headers?.get('Nats-Msg-Id') ?? '');
    // JetStream dropped any repeat itself (Nats-Msg-Id within its duplicate window).
    expect(expectEverythingInOrder(ids)).toBe(0);
    expect(messages.map((m) => m.subject).slice(0, 2)).toEqual([
      `${prefix}.11.message.status`,
      `${prefix}.12.message.status`,
    ]);
    await deleteStream(stream, nats.url);
  });

  it('publishes to the machine NATS with the stream created when absent', async () => {
    const stream = uniqueName('GW_TEST');
    const prefix = uniqueName('gwtest');
    cleanups.push(() => deleteStream(stream));
    const driver = driverFor(new NatsPublisher({ url: 'nats://127.0.0.1:4222', stream, subjectPrefix: prefix, clock }));
    await append(60);
    await waitMoving(
      () => driver.status(),
      (s) => s.backlog === 0 && s.published === 60,
      {
        timeoutMs: 20_000,
        what: 'all published',
      },
    );
    const messages = await streamMessages(stream, 60);
    expect(expectEverythingInOrder(messages.map((m) => m.headers?.get('Nats-Msg-Id') ?? ''))).toBe(0);
  });
});
