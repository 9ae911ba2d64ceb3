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
import { jetstream, jetstreamManager, JetStreamApiCodes, JetStreamApiError } from '@nats-io/jetstream';
import type { JetStreamClient } from '@nats-io/jetstream';
import { connect, headers, type NatsConnection } from '@nats-io/transport-node';
import type { Clock } from '../clock.js';
import {
  boundedClose,
  DEFAULT_CONFIRM_TIMEOUT_MS,
  PublishFailure,
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

interface Open {
  readonly connection: NatsConnection;
  readonly js: JetStreamClient;
  readonly lost: Promise<never>;
}

export class NatsPublisher implements Publisher {
  readonly kind = 'nats' as const;
  private open: Open | null = null;

  constructor(private readonly options: NatsPublisherOptions) {}

  get connected(): boolean {
    return this.open !== null && !this.open.connection.isClosed();
  }

  async connect(): Promise<void> {
    if (this.connected) return;
    await this.close();
    const connection = await connect({
      servers: this.options.url,
      reconnect: false,
      timeout: this.options.connectTimeoutMs ?? 10_000,
      name: 'gateway-events',
    });
    try {
      const manager = await jetstreamManager(connection);
      await ensureStream(manager, this.options.stream, this.options.subjectPrefix);
      const lost = connection.closed().then((error) => {
        if (this.open?.connection === connection) this.open = null;
        throw error instanceof Error ? error : new Error('connection to NATS closed');
      });
      lost.catch(() => undefined);
      this.open = { connection, js: jetstream(connection), lost };
    } catch (error) {
      await connection.close().catch(() => undefined);
      throw error;
    }
  }

  async publish(events: readonly PublishedEvent[]): Promise<void> {
    const open = this.open;
    if (open === null) throw new PublishFailure(0, new Error('not connected to NATS'));
    const timeoutMs = this.options.confirmTimeoutMs ?? DEFAULT_CONFIRM_TIMEOUT_MS;
    const acked = new Array<boolean>(events.length).fill(false);
    let timer: { cancel(): void } | null = null;
    const timeout = new Promise<never>((_, reject) => {
      timer = this.options.clock.after(timeoutMs, () => reject(new Error('NATS did not acknowledge in time')));
    });
    timeout.catch(() => undefined);
    try {
      // Sent back to back on the one connection, so the stream stores them in this order; acknowledged each.
      const acks = events.map((event, index) => {
        const h = headers();
        h.set('Content-Type', 'application/json');
        h.set('Gateway-Device-Id', String(event.deviceId));
        h.set('Gateway-Event-Type', event.type);
        const ack = open.js
          .publish(subjectOf(this.options.subjectPrefix, event), event.body, {
            msgID: event.id,
            headers: h,
            // The client's own timeout is real time; the batch's is the clock's (below), so this one only bounds.
            timeout: Math.max(timeoutMs, 1_000),
            retries: 0,
          })
          .then(() => {
            acked[index] = true;
          });
        ack.catch(() => undefined);
        return ack;
      });
      await Promise.race([Promise.all(acks), open.lost, timeout]);
    } catch (error) {
      const first = acked.indexOf(false);
      await this.close();
      throw new PublishFailure(first === -1 ? events.length : first, error);
    } finally {
      (timer as { cancel(): void } | null)?.cancel();
    }
  }

  async close(): Promise<void> {
    const open = this.open;
    this.open = null;
    if (open === null) return;
    // A broker that stopped answering never confirms the close: bounded, the socket goes with the process anyway.
    await boundedClose(open.connection.close(), this.options.clock);
  }
}

async function ensureStream(
  manager: Awaited<ReturnType<typeof jetstreamManager>>,
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
