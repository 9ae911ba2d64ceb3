/**
 * What the broker drivers ask of a broker (DECISIONS 17; docs/brokers.md): connect, publish a batch of
 * logged events in order and answer only once the broker confirmed each one, close.
 *
 * Owns: the publisher seam and its one error, which says how many of a batch's first events were confirmed before
 * it failed (so the driver moves its cursor past those and no further).
 * Must never: read the store or decide when to retry (driver.ts does both).
 */
import type { Clock } from '../clock.js';

/** One event as a broker publishes it: its log cursor, ids and the standard JSON body. */
export interface PublishedEvent {
  readonly cursor: string;
  /** The event id (`evt_…`): the message id a consumer drops a repeat by. */
  readonly id: string;
  readonly type: string;
  readonly deviceId: number;
  /** Epoch ms. */
  readonly createdAt: number;
  /** The standard event body, JSON. */
  readonly body: string;
}

export type BrokerKind = 'amqp' | 'nats';

export interface Publisher {
  readonly kind: BrokerKind;
  /** Whether a connection is open now (set up and usable). */
  readonly connected: boolean;
  /** Opens the connection and sets up what the broker needs (exchange, stream); resolves once usable. */
  connect(): Promise<void>;
  /**
   * Publishes the events in this order; resolves once the broker confirmed every one. Rejects with
   * PublishFailure (how many of the first events were confirmed) otherwise; the connection is then closed.
   */
  publish(events: readonly PublishedEvent[]): Promise<void>;
  /** Closes the connection (a no-op when none is open). */
  close(): Promise<void>;
}

/** A batch failed after its first `confirmed` events were confirmed by the broker. */
export class PublishFailure extends Error {
  constructor(
    readonly confirmed: number,
    readonly reason: unknown,
  ) {
    super(`publish failed after ${confirmed} confirmed: ${reason instanceof Error ? reason.message : String(reason)}`);
    this.name = 'PublishFailure';
  }
}

/** How long closing a connection may take before the publisher lets go of it. */
export const CLOSE_TIMEOUT_MS = 2_000;

/** Waits for a connection's close, at most CLOSE_TIMEOUT_MS of the clock; never rejects. */
export function boundedClose(closing: Promise<unknown>, clock: Clock): Promise<void> {
  return new Promise<void>((resolve) => {
    const timer = clock.after(CLOSE_TIMEOUT_MS, resolve);
    closing
      .then(
        () => resolve(),
        () => resolve(),
      )
      .finally(() => timer.cancel());
  });
}

/** How long a batch may wait for its confirmations before the connection counts as dead. */
export const DEFAULT_CONFIRM_TIMEOUT_MS = 30_000;
