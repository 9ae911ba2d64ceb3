/**
 * The RabbitMQ publisher (DECISIONS 17; docs/brokers.md): every event on the durable topic exchange
 * (declared here on each connect), routing key `<device_id>.<event type>`, persistent, `message_id` the event id,
 * on a confirm channel: a batch counts as published only once the broker confirmed every message of it.
 *
 * Owns: the connection and its confirm channel, the exchange declaration, the message properties.
 * Must never: reconnect by itself or retry (the driver decides when, on its clock), or let a dead connection
 * leave a batch waiting for ever (a lost connection, a refusal or the confirm timeout fails it).
 */
import { connect, type ChannelModel, type ConfirmChannel } from 'amqplib';
import type { Clock } from '../clock.js';
import {
  boundedClose,
  DEFAULT_CONFIRM_TIMEOUT_MS,
  PublishFailure,
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
  /** Rejects once the connection or the channel is gone (never resolves). */
  readonly lost: Promise<never>;
}

export function routingKey(event: Pick<PublishedEvent, 'deviceId' | 'type'>): string {
  return `${event.deviceId}.${event.type}`;
}

export class AmqpPublisher implements Publisher {
  readonly kind = 'amqp' as const;
  private open: Open | null = null;

  constructor(private readonly options: AmqpPublisherOptions) {}

  get connected(): boolean {
    return this.open !== null;
  }

  async connect(): Promise<void> {
    if (this.open !== null) return;
    const model = await connect(this.options.url, { timeout: this.options.connectTimeoutMs ?? 10_000 });
    let fail: (error: Error) => void = () => undefined;
    const lost = new Promise<never>((_, reject) => {
      fail = reject;
    });
    // Nobody may be waiting on it when it goes: the rejection is handled here, and by each batch that awaits it.
    lost.catch(() => undefined);
    const gone = (error?: Error) => {
      if (this.open?.model === model) this.open = null;
      fail(error ?? new Error('connection to RabbitMQ closed'));
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
      this.open = { model, channel, lost };
    } catch (error) {
      await model.close().catch(() => undefined);
      throw error;
    }
  }

  async publish(events: readonly PublishedEvent[]): Promise<void> {
    const open = this.open;
    if (open === null) throw new PublishFailure(0, new Error('not connected to RabbitMQ'));
    // Confirms arrive in publishing order; the first unconfirmed index is how far the batch got.
    const acked = new Array<boolean>(events.length).fill(false);
    const confirmedPrefix = () => {
      const first = acked.indexOf(false);
      return first === -1 ? events.length : first;
    };
    let timer: { cancel(): void } | null = null;
    const timeout = new Promise<never>((_, reject) => {
      timer = this.options.clock.after(this.options.confirmTimeoutMs ?? DEFAULT_CONFIRM_TIMEOUT_MS, () =>
        reject(new Error('RabbitMQ did not confirm in time')),
      );
    });
    timeout.catch(() => undefined);
    try {
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
                acked[index] = true;
                resolve();
              }
            },
          );
        });
        // Seen by Promise.all below; handled here so a refusal while waiting for a drain is not unhandled.
        confirm.catch(() => undefined);
        confirms.push(confirm);
        // The channel's buffer is full: wait until the socket took it before writing more.
        if (!buffer.ready) await Promise.race([drained(open.channel), open.lost, timeout]);
      }
      await Promise.race([Promise.all(confirms), open.lost, timeout]);
    } catch (error) {
      const confirmed = confirmedPrefix();
      await this.close();
      throw new PublishFailure(confirmed, error);
    } finally {
      (timer as { cancel(): void } | null)?.cancel();
    }
  }

  async close(): Promise<void> {
    const open = this.open;
    this.open = null;
    if (open === null) return;
    // A broker that stopped answering never confirms the close: bounded, the socket goes with the process anyway.
    await boundedClose(open.model.close(), this.options.clock);
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
