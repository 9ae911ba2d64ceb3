/**
 * The brokers as the composition root builds them (DECISIONS 17; docs/brokers.md): a driver for each broker
 * the configuration names (RabbitMQ, NATS JetStream), none when neither is set.
 *
 * Owns: which publishers exist, and the calls the root makes (start, wake on appended events, status, stop).
 * Must never: publish (driver.ts) or read the log itself (it is handed a reader).
 */
import { randomBytes } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../clock.js';
import type { BrokersConfig } from '../config.js';
import type { Committer } from '../store/batcher.js';
import type { Store } from '../store/store.js';
import { brokerCursors } from './cursors-repository.js';
import { AmqpPublisher } from './amqp.js';
import { BrokerDriver, type BrokerStatus, type BrokerTimings, type CursorMove, type EventLogReader } from './driver.js';
import { SharedReads } from '../events/shared-reads.js';
import { logReader } from './log-reader.js';
import { NatsPublisher } from './nats.js';
import type { PublishedEvent, Publisher } from './publisher.js';

export type { BrokerStatus, BrokerTimings } from './driver.js';

export interface BrokersOptions {
  readonly config: BrokersConfig;
  readonly store: Store;
  /** The group commit the brokers' cursor moves join (each its own commit was an fsync per batch on SQLite). */
  readonly committer?: Committer;
  /** Says when events may have been appended (the event log's watch: commits here, other nodes, its poll). */
  readonly watch: { subscribe(listener: () => void): () => void };
  readonly clock: Clock;
  readonly logger: FastifyBaseLogger;
  /** This node's name (GATEWAY_SERVER_NAME); a random suffix makes each process its own lease holder. */
  readonly serverName: string;
  readonly timings?: BrokerTimings & { readonly confirmTimeoutMs?: number };
}

export interface Brokers {
  readonly drivers: readonly BrokerDriver[];
  start(): void;
  /** Events were appended (rung after their commit). */
  wake(): void;
  /** Each broker's state; the backlogs count only the account's events when `accountId` is given. */
  statuses(accountId?: number): Promise<BrokerStatus[]>;
  close(): Promise<void>;
}

export function createBrokers(options: BrokersOptions): Brokers {
  const { config, clock, timings } = options;
  const confirm = timings?.confirmTimeoutMs === undefined ? {} : { confirmTimeoutMs: timings.confirmTimeoutMs };
  const publishers: Publisher[] = [];
  if (config.amqp !== null) publishers.push(new AmqpPublisher({ ...config.amqp, clock, ...confirm }));
  if (config.nats !== null) publishers.push(new NatsPublisher({ ...config.nats, clock, ...confirm }));
  const holder = `${options.serverName}/${randomBytes(6).toString('hex')}`;
  const logger = options.logger.child({ module: 'brokers' });
  // The brokers are woken together and mostly stand at the same cursor: one read for those that do.
  const reads = new SharedReads<PublishedEvent[]>();
  const own = logReader(options.store.db);
  const log: EventLogReader = {
    read: (after, limit) => reads.read(`${after}|${limit}`, () => own.read(after, limit)),
    backlog: (after, accountId) => own.backlog(after, accountId),
  };
  const advance = options.committer?.channel<CursorMove, boolean>(async (trx, moves) => {
    const moved: boolean[] = [];
    for (const m of moves) moved.push(await brokerCursors.advance(trx, m.destination, m.holder, m.cursor, m.now));
    return moved;
  });
  const cursors = advance === undefined ? {} : { advanceCursor: advance };
  const drivers = publishers.map(
    (publisher) =>
      new BrokerDriver({ ...timings, ...cursors, publisher, store: options.store, log, clock, logger, holder }),
  );
  const wake = () => {
    reads.ring();
    drivers.forEach((driver) => driver.wake());
  };
  let unsubscribe: (() => void) | null = null;
  return {
    drivers,
    start: () => {
      if (drivers.length === 0) return;
      unsubscribe = options.watch.subscribe(wake);
      drivers.forEach((driver) => driver.start());
    },
    wake,
    statuses: (accountId) => Promise.all(drivers.map((driver) => driver.status(accountId))),
    close: async () => {
      unsubscribe?.();
      unsubscribe = null;
      await Promise.all(drivers.map((driver) => driver.stop()));
    },
  };
}
