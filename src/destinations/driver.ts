/**
 * A broker driver (DECISIONS 17; docs/brokers.md): publishes the event log to one broker in log order,
 * from the cursor stored for that broker, moving the cursor on only after the broker confirmed the events.
 *
 *   starting ──lease taken, connected──▶ up ──a publish or the connection fails──▶ down ──backoff, connected──▶ up
 *   any ──another process holds the lease──▶ standby ──its lease ran out──▶ (takes it) ──▶ up
 *   any ──stop()──▶ stopped (the run in flight ends, the connection closes, the lease is let go)
 *
 * While the broker is down nothing is lost: the events wait in the log and go out, in order, once it is back. A
 * batch that failed part way moves the cursor past the events the broker confirmed and no further, so a repeat is
 * only ever of an event whose id the consumer has seen (RabbitMQ's `message_id`, NATS's `Nats-Msg-Id`, which
 * JetStream itself drops within its duplicate window).
 *
 * Owns: the cursor and lease of its broker while it holds them, the reconnect backoff (on the injected clock,
 * through the wake-up loop), the state it shows.
 * Must never: move the cursor past an unconfirmed event, publish while another process holds the lease, or wait
 * except through its clock.
 */
import type { FastifyBaseLogger } from 'fastify';
import { doubling, jitter } from '../backoff.js';
import type { Clock } from '../clock.js';
import type { Store } from '../store/store.js';
import { WakeLoop, type NextRun } from '../wake-loop.js';
import { brokerCursors } from './cursors-repository.js';
import { PublishFailure, type BrokerKind, type PublishedEvent, type Publisher } from './publisher.js';

/** The event log as a driver reads it: every account's events, in log order, after a cursor. */
export interface EventLogReader {
  read(after: string | null, limit: number): Promise<PublishedEvent[]>;
  /** How many events are logged after the cursor (what is still to be published); only the account's when named. */
  backlog(after: string | null, accountId?: number): Promise<number>;
}

/** How long a stop waits for the confirmations of a batch in flight before it closes the connection under it. */
export const STOP_GRACE_MS = 5_000;

export type BrokerState = 'starting' | 'up' | 'down' | 'standby' | 'stopped';

export interface BrokerStatus {
  readonly broker: BrokerKind;
  readonly state: BrokerState;
  /** Events logged and not yet confirmed by the broker (of one account when asked so); null when the store could not say. */
  readonly backlog: number | null;
  /** Events this process published (confirmed) since it started. */
  readonly published: number;
  /** The last failure's message while not up; null when up. */
  readonly lastError: string | null;
}

export interface BrokerTimings {
  /** Events per batch (one read, one wait for the confirmations). */
  readonly batchSize?: number;
  /** How long a lease lasts; renewed each third of it. */
  readonly leaseMs?: number;
  /** Reconnect backoff: the first wait, doubled to the ceiling, with jitter. */
  readonly retryBaseMs?: number;
  readonly retryMaxMs?: number;
  readonly random?: () => number;
}

/** Moving a broker's cursor: answers false when the lease was lost meanwhile. */
export interface CursorMove {
  readonly destination: string;
  readonly holder: string;
  readonly cursor: string;
  readonly now: number;
}

export interface BrokerDriverOptions extends BrokerTimings {
  readonly publisher: Publisher;
  readonly store: Store;
  readonly log: EventLogReader;
  readonly clock: Clock;
  readonly logger: FastifyBaseLogger;
  /** This process, unique in the cluster (the lease's holder). */
  readonly holder: string;
  /** Moves the cursor, e.g. in a shared group commit; by default a statement of its own on the store. */
  readonly advanceCursor?: (move: CursorMove) => Promise<boolean>;
}

export class BrokerDriver {
  private readonly loop: WakeLoop;
  private state: BrokerState = 'starting';
  private holding = false;
  private cursor: string | null = null;
  private renewAt = 0;
  private published = 0;
  private lastError: string | null = null;
  private stopping = false;
  private readonly batchSize: number;
  private readonly leaseMs: number;

  constructor(private readonly options: BrokerDriverOptions) {
    this.batchSize = options.batchSize ?? 500;
    this.leaseMs = options.leaseMs ?? 60_000;
    const base = options.retryBaseMs ?? 500;
    const max = options.retryMaxMs ?? 30_000;
    this.loop = new WakeLoop({
      clock: options.clock,
      run: () => this.run(),
      onError: (error, failures) => this.failed(error, failures),
      afterErrorMs: (failures) => jitter(doubling(base, max, failures), options.random),
    });
  }

  get broker(): BrokerKind {
    return this.options.publisher.kind;
  }

  start(): void {
    this.loop.wake();
  }

  /** Events were appended: look now. */
  readonly wake = (): void => {
    this.loop.wake();
  };

  /** Resolves once no run is in flight (tests). */
  settled(): Promise<void> {
    return this.loop.settled();
  }

  /** Its state; the backlog is the account's own events only when `accountId` is given (every account's otherwise). */
  async status(accountId?: number): Promise<BrokerStatus> {
    const { store, log } = this.options;
    let backlog: number | null;
    try {
      const cursor = this.holding ? this.cursor : await brokerCursors.cursor(store.db, this.broker);
      backlog = await log.backlog(cursor, accountId);
    } catch {
      backlog = null;
    }
    return {
      broker: this.broker,
      state: this.state,
      backlog,
      published: this.published,
      lastError: this.state === 'up' ? null : this.lastError,
    };
  }

  async stop(): Promise<void> {
    this.stopping = true;
    const stopped = this.loop.stop();
    // A batch in flight gets a moment for its confirmations (so the next publisher repeats nothing); a broker that
    // stopped answering is then closed under it, and what it did not confirm stays after the stored cursor.
    await new Promise<void>((resolve) => {
      const grace = this.options.clock.after(STOP_GRACE_MS, resolve);
      void stopped.finally(() => {
        grace.cancel();
        resolve();
      });
    });
    await this.options.publisher.close();
    await stopped;
    this.state = 'stopped';
    await this.options.publisher.close();
    if (this.holding) {
      this.holding = false;
      await brokerCursors.release(this.options.store.db, this.broker, this.options.holder).catch(() => undefined);
    }
  }

  private async run(): Promise<NextRun> {
    const { store, clock, publisher, log, holder } = this.options;
    const now = clock.now();
    if (!this.holding || now >= this.renewAt) {
      const lease = await brokerCursors.acquire(store.db, this.broker, holder, now, now + this.leaseMs);
      if (lease === null) {
        // Another process publishes to this broker; look again around when its lease could run out.
        if (this.holding) await publisher.close();
        this.holding = false;
        this.state = 'standby';
        return now + Math.ceil(this.leaseMs / 3);
      }
      if (!this.holding) this.cursor = lease.cursor;
      this.holding = true;
      this.renewAt = now + Math.ceil(this.leaseMs / 3);
    }
    if (!publisher.connected) {
      await publisher.connect();
      this.options.logger.info({ broker: this.broker }, 'broker: connected');
    }
    this.state = 'up';
    const events = await log.read(this.cursor, this.batchSize);
    // Nothing to publish: the log's watch wakes the driver when events are appended; the lease is renewed meanwhile.
    if (events.length === 0) return this.renewAt;
    try {
      await publisher.publish(events);
    } catch (error) {
      const confirmed = error instanceof PublishFailure ? error.confirmed : 0;
      if (confirmed > 0) await this.advance(events[confirmed - 1] as PublishedEvent, confirmed);
      throw error;
    }
    // A full batch (there may be more) or a lost lease (take it again or stand by): run again at once.
    const advanced = await this.advance(events[events.length - 1] as PublishedEvent, events.length);
    if (!advanced || events.length === this.batchSize) this.loop.wake();
    return this.renewAt;
  }

  /** Moves the cursor past `last`; false when the lease was lost meanwhile (the next run takes it again or waits). */
  private async advance(last: PublishedEvent, count: number): Promise<boolean> {
    const { store, clock, holder } = this.options;
    const move = { destination: this.broker, holder, cursor: last.cursor, now: clock.now() };
    const moved = await (this.options.advanceCursor?.(move) ??
      brokerCursors.advance(store.db, move.destination, move.holder, move.cursor, move.now));
    if (!moved) {
      this.holding = false;
      this.options.logger.warn({ broker: this.broker }, 'broker: lease lost; the cursor was not moved');
      return false;
    }
    this.cursor = last.cursor;
    this.published += count;
    return true;
  }

  private failed(error: unknown, failures: number): void {
    this.state = 'down';
    this.lastError = error instanceof Error ? error.message : String(error);
    // A reconnect is due after the backoff; the next run connects afresh.
    void this.options.publisher.close();
    const level = !this.stopping && (failures === 1 || failures % 20 === 0) ? 'warn' : 'debug';
    this.options.logger[level]({ broker: this.broker, failures, err: error }, 'broker: publishing failed; retrying');
  }
}
