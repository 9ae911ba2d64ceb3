// The broker publishers against the machine's real RabbitMQ and NATS JetStream (docs/brokers.md): the
// routing key and subject, properties and headers, ids and body of each message; the exchange and stream the
// publisher sets up; a failure is a PublishFailure saying how many were confirmed. Each test uses names of its
// own; a broker that is not reachable fails the test with that reason.
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { connect as natsConnect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { FakeClock } from '../../src/clock.js';
import { AmqpPublisher } from '../../src/destinations/amqp.js';
import { NatsPublisher } from '../../src/destinations/nats.js';
import { PublishFailure, type PublishedEvent } from '../../src/destinations/publisher.js';
import {
  AMQP_URL,
  NATS_URL,
  amqpInbox,
  deleteStream,
  requireNats,
  requireRabbit,
  streamMessages,
  tcpProxy,
  uniqueName,
} from '../helpers/brokers.js';
import { closedPort } from '../helpers/ports.js';
import { waitFor } from '../helpers/wait.js';

function event(n: number, deviceId: number, type = 'message.status'): PublishedEvent {
  const id = `evt_${uniqueName('t')}_${n}`;
  return {
    cursor: String(n),
    id,
    type,
    deviceId,
    createdAt: Date.UTC(2026, 0, 1, 0, 0, n),
    body: JSON.stringify({ id, type, device: deviceId, created_at: '2026-01-01T00:00:00.000Z', data: { n } }),
  };
}

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('RabbitMQ publisher', () => {
  beforeAll(() => requireRabbit());

  it('publishes on the durable topic exchange with routing key <device>.<type>, persistent, message_id the event id', async () => {
    const exchange = uniqueName('gw_test_ex');
    const publisher = new AmqpPublisher({ url: AMQP_URL, exchange, clock: new FakeClock() });
    cleanups.push(() => publisher.close());
    await publisher.connect();
    expect(publisher.connected).toBe(true);
    const inbox = await amqpInbox(exchange);
    cleanups.push(() => inbox.close());
    const events = [event(1, 7), event(2, 8, 'message.incoming'), event(3, 7)];
    await publisher.publish(events);
    await waitFor(
      () => inbox.messages.length,
      (n) => n === 3,
      { what: 'three messages' },
    );
    expect(inbox.messages.map((m) => m.fields.routingKey)).toEqual([
      '7.message.status',
      '8.message.incoming',
      '7.message.status',
    ]);
    for (const [i, message] of inbox.messages.entries()) {
      const sent = events[i] as PublishedEvent;
      expect(message.fields.exchange).toBe(exchange);
      expect(message.properties.messageId).toBe(sent.id);
      expect(message.properties.deliveryMode).toBe(2);
      expect(message.properties.contentType).toBe('application/json');
      expect(message.properties.type).toBe(sent.type);
      expect(message.properties.headers).toMatchObject({
        'gateway-device-id': sent.deviceId,
        'gateway-event-type': sent.type,
      });
      expect(message.content.toString()).toBe(sent.body);
    }
  });

  it('declares the exchange as a durable topic exchange', async () => {
    const exchange = uniqueName('gw_test_ex');
    const publisher = new AmqpPublisher({ url: AMQP_URL, exchange, clock: new FakeClock() });
    cleanups.push(() => publisher.close());
    await publisher.connect();
    // Declaring it again with other settings is refused by RabbitMQ: it exists as durable and topic.
    const inbox = await amqpInbox(exchange);
    cleanups.push(() => inbox.close());
    const { connect } = await import('amqplib');
    const model = await connect(AMQP_URL);
    cleanups.push(() => model.close().catch(() => undefined));
    const channel = await model.createChannel();
    channel.on('error', () => undefined);
    await expect(channel.assertExchange(exchange, 'topic', { durable: false })).rejects.toThrow(/PRECONDITION_FAILED/);
  });

  it('fails to connect to a port where nothing listens', async () => {
    const port = await closedPort();
    const publisher = new AmqpPublisher({
      url: `amqp://guest:guest@127.0.0.1:${port}`,
      exchange: uniqueName('gw_test_ex'),
      clock: new FakeClock(),
    });
    await expect(publisher.connect()).rejects.toThrow(/ECONNREFUSED/);
    expect(publisher.connected).toBe(false);
  });

  it('a batch on a lost connection is a PublishFailure and the publisher counts as disconnected', async () => {
    const proxy = await tcpProxy('127.0.0.1', Number(new URL(AMQP_URL).port || 5672));
    cleanups.push(() => proxy.close());
    const publisher = new AmqpPublisher({
      url: AMQP_URL.replace(/:\d+$/, `:${proxy.port}`),
      exchange: uniqueName('gw_test_ex'),
      clock: new FakeClock(),
    });
    cleanups.push(() => publisher.close());
    await publisher.connect();
    proxy.cut();
    await waitFor(
      () => publisher.connected,
      (c) => !c,
      { what: 'the publisher to see the connection gone' },
    );
    const failure = await publisher.publish([event(1, 1)]).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(PublishFailure);
    expect((failure as PublishFailure).confirmed).toBe(0);
  });
});

describe('NATS JetStream publisher', () => {
  beforeAll(() => requireNats());

  it('creates the stream when absent and publishes on <prefix>.<device>.<type> with Nats-Msg-Id the event id', async () => {
    const stream = uniqueName('GW_TEST');
    const prefix = `${uniqueName('gwtest')}.events`;
    cleanups.push(() => deleteStream(stream));
    const publisher = new NatsPublisher({ url: NATS_URL, stream, subjectPrefix: prefix, clock: new FakeClock() });
    cleanups.push(() => publisher.close());
    await publisher.connect();
    const nc = await natsConnect({ servers: NATS_URL });
    cleanups.push(() => nc.close());
    const info = await (await jetstreamManager(nc)).streams.info(stream);
    expect(info.config.subjects).toEqual([`${prefix}.>`]);

    const events = [event(1, 7), event(2, 8, 'message.incoming'), event(3, 7)];
    await publisher.publish(events);
    // The same ids again (a retry after a lost confirmation): JetStream drops them as duplicates.
    await publisher.publish(events);
    const messages = await streamMessages(stream, 3);
    expect(messages).toHaveLength(3);
    expect(messages.map((m) => m.subject)).toEqual([
      `${prefix}.7.message.status`,
      `${prefix}.8.message.incoming`,
      `${prefix}.7.message.status`,
    ]);
    for (const [i, message] of messages.entries()) {
      const sent = events[i] as PublishedEvent;
      expect(message.headers?.get('Nats-Msg-Id')).toBe(sent.id);
      expect(message.headers?.get('Content-Type')).toBe('application/json');
      expect(message.headers?.get('Gateway-Device-Id')).toBe(String(sent.deviceId));
      expect(message.headers?.get('Gateway-Event-Type')).toBe(sent.type);
      expect(message.string()).toBe(sent.body);
    }
    expect((await (await jetstreamManager(nc)).streams.info(stream)).state.messages).toBe(3);
  });

  it('leaves a stream that exists as it is', async () => {
    const stream = uniqueName('GW_TEST');
    const prefix = uniqueName('gwtest');
    cleanups.push(() => deleteStream(stream));
    const nc = await natsConnect({ servers: NATS_URL });
    cleanups.push(() => nc.close());
    const manager = await jetstreamManager(nc);
    await manager.streams.add({ name: stream, subjects: [`${prefix}.>`, `${prefix}_other.>`], max_msgs: 1000 });
    const publisher = new NatsPublisher({ url: NATS_URL, stream, subjectPrefix: prefix, clock: new FakeClock() });
    cleanups.push(() => publisher.close());
    await publisher.connect();
    await publisher.publish([event(1, 3)]);
    const info = await manager.streams.info(stream);
    expect(info.config.subjects).toEqual([`${prefix}.>`, `${prefix}_other.>`]);
    expect(info.config.max_msgs).toBe(1000);
    expect(info.state.messages).toBe(1);
  });

  it('fails to connect to a port where nothing listens', async () => {
    const port = await closedPort();
    const publisher = new NatsPublisher({
      url: `nats://127.0.0.1:${port}`,
      stream: uniqueName('GW_TEST'),
      subjectPrefix: 'x',
      clock: new FakeClock(),
    });
    await expect(publisher.connect()).rejects.toThrow();
    expect(publisher.connected).toBe(false);
  });
});
