/**
 * The RabbitMQ publisher (DECISIONS 17; docs/brokers.md): every event on the durable topic exchange
 * (declared here on each connect), routing key `<device_id>.<event type>`, persistent, `message_id` the event id,
 * on a confirm channel: a batch counts as published only once the broker confirmed every message of it.
 *
 * Owns: the connection and its confirm channel, the exchange declaration, the message properties.
 * Must never: reconnect by itself or retry (the driver decides when, on its clock), or let a dead connection
 * leave a batch waiting for ever (a lost connection, a refusal or the confirm timeout fails it).
 */
import type * as AmqpModule from 'amqplib';
import type { ChannelModel, ConfirmChannel } from 'amqplib';
import type { Clock } from '../clock.js';
import { loadOnce } from '../load-once.js';
import {
  ConfirmingPublisher,
  connectionLoss,
  type ConnectionLoss,
  type PublishedEvent,
  type Publisher,
} from './publisher.js';

export interface AmqpPublisherOptions {
  readonly url: string;
  readonly exchange: string;
  readonly clock: Clock;
  readonly confirmTimeoutMs?: number;
  /** How long opening the TCP connection may take. */
  readonly connectTimeoutMs?: number;
}

interface Open {
  readonly model: ChannelModel;
  readonly channel: ConfirmChannel;
  /** The connection or the channel is gone. */
  readonly loss: ConnectionLoss;
}

/** The RabbitMQ client, loaded on the first connect: a gateway without an AMQP destination never loads it (issue 25). */
const amqpClient: () => Promise<typeof AmqpModule> = loadOnce(() => import('amqplib'));

export function routingKey(event: Pick<PublishedEvent, 'deviceId' | 'type'>): string {
  return `${event.deviceId}.${event.type}`;
}

export class AmqpPublisher extends ConfirmingPublisher<Open> implements Publisher {
  readonly kind = 'amqp' as const;
  protected readonly brokerName = 'RabbitMQ';

  constructor(private readonly options: AmqpPublisherOptions) {
    super(options);
  }

  get connected(): boolean {
    return this.open !== null;
  }

  async connect(): Promise<void> {
    if (this.open !== null) return;
    const { connect } = await amqpClient();
    const model = await connect(this.options.url, { timeout: this.options.connectTimeoutMs ?? 10_000 });
    const loss = connectionLoss();
    const gone = (error?: Error) => {
      if (this.open?.model === model) this.open = null;
      loss.fail(error ?? new Error('connection to RabbitMQ closed'));
    };
    model.on('error', (error: Error) => gone(error));
    model.on('close', (error?: Error) => gone(error));
    try {
      const channel = await model.createConfirmChannel();
      channel.on('error', (error: Error) => gone(error));
      channel.on('close', () => {
        gone(new Error('RabbitMQ closed the channel'));
        void model.close().catch(() => undefined);
      });
      await channel.assertExchange(this.options.exchange, 'topic', { durable: true });
      this.open = { model, channel, loss };
    } catch (error) {
      await model.close().catch(() => undefined);
      throw error;
    }
  }

  publish(events: readonly PublishedEvent[]): Promise<void> {
    // Confirms arrive in publishing order; the first unconfirmed index is how far the batch got.
    return this.confirmedBatch(events.length, async (open, { confirmed, until }) => {
      const confirms: Promise<void>[] = [];
      const buffer = { ready: true };
      for (const [index, event] of events.entries()) {
        const confirm = new Promise<void>((resolve, reject) => {
          buffer.ready = open.channel.publish(
            this.options.exchange,
            routingKey(event),
            Buffer.from(event.body),
            properties(event),
            (error: unknown) => {
              if (error) reject(error instanceof Error ? error : new Error('RabbitMQ refused the message'));
              else {
                confirmed(index);
                resolve();
              }
            },
          );
        });
        // Seen by Promise.all below; handled here so a refusal while waiting for a drain is not unhandled.
        confirm.catch(() => undefined);
        confirms.push(confirm);
        // The channel's buffer is full: wait until the socket took it before writing more.
        if (!buffer.ready) await until(drained(open.channel));
      }
      await until(Promise.all(confirms));
    });
  }

  protected closeConnection(open: Open): Promise<void> {
    return open.model.close();
  }
}

function properties(event: PublishedEvent) {
  return {
    persistent: true,
    messageId: event.id,
    type: event.type,
    contentType: 'application/json',
    timestamp: Math.floor(event.createdAt / 1000),
    appId: 'gateway',
    headers: { 'gateway-device-id': event.deviceId, 'gateway-event-type': event.type },
  };
}

function drained(channel: ConfirmChannel): Promise<void> {
  return new Promise((resolve) => channel.once('drain', () => resolve()));
}
