/**
 * The NATS JetStream publisher (DECISIONS 17; docs/brokers.md): every event on subject
 * `<prefix>.<device_id>.<event type>` of the stream (created with subjects `<prefix>.>` when absent), with
 * `Nats-Msg-Id` the event id, so the stream drops a repeat within its duplicate window. A batch counts as
 * published only once JetStream acknowledged every message of it.
 *
 * Owns: the connection (the client's own reconnecting is off: the driver reconnects, on its clock), the stream's
 * creation, the subject and headers.
 * Must never: change a stream that exists (its subjects, limits and retention are the operator's), or let a dead
 * connection leave a batch waiting for ever.
 */
import type * as JetStreamModule from '@nats-io/jetstream';
import type { JetStreamClient, JetStreamManager } from '@nats-io/jetstream';
import type * as TransportModule from '@nats-io/transport-node';
import type { NatsConnection } from '@nats-io/transport-node';
import type { Clock } from '../clock.js';
import { loadOnce } from '../load-once.js';
import {
  ConfirmingPublisher,
  connectionLoss,
  type ConnectionLoss,
  type PublishedEvent,
  type Publisher,
} from './publisher.js';

export interface NatsPublisherOptions {
  readonly url: string;
  readonly stream: string;
  readonly subjectPrefix: string;
  readonly clock: Clock;
  readonly confirmTimeoutMs?: number;
  readonly connectTimeoutMs?: number;
}

export function subjectOf(prefix: string, event: Pick<PublishedEvent, 'deviceId' | 'type'>): string {
  return `${prefix}.${event.deviceId}.${event.type}`;
}

interface Client {
  readonly transport: typeof TransportModule;
  readonly jetstream: typeof JetStreamModule;
}

/** The NATS client, loaded on the first connect: a gateway without a NATS destination never loads it (issue 25). */
const natsClient: () => Promise<Client> = loadOnce(async () => {
  const [transport, jetstream] = await Promise.all([import('@nats-io/transport-node'), import('@nats-io/jetstream')]);
  return { transport, jetstream };
});

interface Open {
  readonly connection: NatsConnection;
  readonly js: JetStreamClient;
  readonly headers: (typeof TransportModule)['headers'];
  /** The connection is gone. */
  readonly loss: ConnectionLoss;
}

export class NatsPublisher extends ConfirmingPublisher<Open> implements Publisher {
  readonly kind = 'nats' as const;
  protected readonly brokerName = 'NATS';

  constructor(private readonly options: NatsPublisherOptions) {
    super(options);
  }

  get connected(): boolean {
    return this.open !== null && !this.open.connection.isClosed();
  }

  async connect(): Promise<void> {
    if (this.connected) return;
    await this.close();
    const { transport, jetstream } = await natsClient();
    const connection = await transport.connect({
      servers: this.options.url,
      reconnect: false,
      timeout: this.options.connectTimeoutMs ?? 10_000,
      name: 'gateway-events',
      // Otherwise the client makes two errors per publish to keep the stack of where it began, in case it fails: 4% of
      // the gateway's CPU with every destination busy (bench/README.md). A failed publish is logged with its message,
      // and every publish begins here.
      noAsyncTraces: true,
    });
    try {
      const manager = await jetstream.jetstreamManager(connection);
      await ensureStream(jetstream, manager, this.options.stream, this.options.subjectPrefix);
      const loss = connectionLoss();
      void connection.closed().then((error) => {
        if (this.open?.connection === connection) this.open = null;
        loss.fail(error instanceof Error ? error : new Error('connection to NATS closed'));
      });
      this.open = { connection, js: jetstream.jetstream(connection), headers: transport.headers, loss };
    } catch (error) {
      await connection.close().catch(() => undefined);
      throw error;
    }
  }

  publish(events: readonly PublishedEvent[]): Promise<void> {
    return this.confirmedBatch(events.length, async (open, { confirmed, until }) => {
      // Sent back to back on the one connection, so the stream stores them in this order; acknowledged each.
      const acks = events.map((event, index) => {
        const h = open.headers();
        h.set('Content-Type', 'application/json');
        h.set('Gateway-Device-Id', String(event.deviceId));
        h.set('Gateway-Event-Type', event.type);
        const ack = open.js
          .publish(subjectOf(this.options.subjectPrefix, event), event.body, {
            msgID: event.id,
            headers: h,
            // The client's own timeout is real time; the batch's deadline is the clock's (publisher.ts): this one only bounds.
            timeout: Math.max(this.confirmTimeoutMs, 1_000),
            retries: 0,
          })
          .then(() => confirmed(index));
        ack.catch(() => undefined);
        return ack;
      });
      await until(Promise.all(acks));
    });
  }

  protected closeConnection(open: Open): Promise<void> {
    return open.connection.close();
  }
}

async function ensureStream(
  { JetStreamApiError, JetStreamApiCodes }: typeof JetStreamModule,
  manager: JetStreamManager,
  stream: string,
  prefix: string,
): Promise<void> {
  try {
    await manager.streams.info(stream);
  } catch (error) {
    if (!(error instanceof JetStreamApiError) || error.code !== JetStreamApiCodes.StreamNotFound) throw error;
    try {
      await manager.streams.add({ name: stream, subjects: [`${prefix}.>`] });
    } catch (raced) {
      // Another process created it meanwhile: as good.
      await manager.streams.info(stream).catch(() => {
        throw raced;
      });
    }
  }
}
