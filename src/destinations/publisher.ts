/**
 * What the broker drivers ask of a broker (DECISIONS 17; docs/brokers.md): connect, publish a batch of
 * logged events in order and answer only once the broker confirmed each one, close.
 *
 * Owns: the publisher seam and its one error, which says how many of a batch's first events were confirmed before
 * it failed (so the driver moves its cursor past those and no further); the one failure path both publishers share
 * (a lost connection, a refusal or the confirm deadline fails the batch with that count and closes the connection).
 * Must never: read the store or decide when to retry (driver.ts does both).
 */
import type { Clock, Timer } from '../clock.js';

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

/** A connection's end as a promise a batch can wait on beside its confirmations. */
export interface ConnectionLoss {
  /** Rejects once the connection is gone (never resolves); its rejection is always handled. */
  readonly lost: Promise<never>;
  /** The connection went (the first call counts). */
  readonly fail: (error: Error) => void;
}

export function connectionLoss(): ConnectionLoss {
  let fail: (error: Error) => void = () => undefined;
  const lost = new Promise<never>((_, reject) => {
    fail = reject;
  });
  // Nobody may be waiting on it when it goes: the rejection is handled here, and by each batch that awaits it.
  lost.catch(() => undefined);
  return { lost, fail };
}

/** What a publisher's `send` is given for one batch. */
export interface BatchConfirmations {
  /** The broker confirmed the event at this index of the batch. */
  confirmed(index: number): void;
  /** Waits for `waiting`, unless the connection is lost or the deadline passes first (then throws). */
  until(waiting: Promise<unknown>): Promise<void>;
}

/**
 * What both publishers share: the open connection and its bounded close, and the one path of a batch: whatever ends
 * it early (a refusal, the connection lost, the confirm deadline on the clock) closes the connection and fails the
 * batch with PublishFailure, how many of its first events the broker confirmed.
 */
export abstract class ConfirmingPublisher<O extends { readonly loss: ConnectionLoss }> {
  protected open: O | null = null;

  constructor(private readonly base: { readonly clock: Clock; readonly confirmTimeoutMs?: number }) {}

  /** The broker's name in errors (`RabbitMQ`, `NATS`). */
  protected abstract readonly brokerName: string;

  /** Closes the connection of `open` (close() bounds the wait). */
  protected abstract closeConnection(open: O): Promise<unknown>;

  protected get confirmTimeoutMs(): number {
    return this.base.confirmTimeoutMs ?? DEFAULT_CONFIRM_TIMEOUT_MS;
  }

  async close(): Promise<void> {
    const open = this.open;
    this.open = null;
    if (open === null) return;
    // A broker that stopped answering never confirms the close: bounded, the socket goes with the process anyway.
    await boundedClose(this.closeConnection(open), this.base.clock);
  }

  /**
   * Runs one batch of `count` events through `send`, which publishes them in order on `open`, marks each
   * confirmation and waits through `until`; resolves once `send` did (every event confirmed).
   */
  protected async confirmedBatch(
    count: number,
    send: (open: O, batch: BatchConfirmations) => Promise<void>,
  ): Promise<void> {
    const open = this.open;
    if (open === null) throw new PublishFailure(0, new Error(`not connected to ${this.brokerName}`));
    const acked = new Array<boolean>(count).fill(false);
    let timer: Timer | null = null;
    const deadline = new Promise<never>((_, reject) => {
      timer = this.base.clock.after(this.confirmTimeoutMs, () =>
        reject(new Error(`${this.brokerName} did not confirm in time`)),
      );
    });
    deadline.catch(() => undefined);
    const batch: BatchConfirmations = {
      confirmed: (index) => {
        acked[index] = true;
      },
      until: async (waiting) => {
        await Promise.race([waiting, open.loss.lost, deadline]);
      },
    };
    try {
      await send(open, batch);
    } catch (error) {
      const first = acked.indexOf(false);
      await this.close();
      throw new PublishFailure(first === -1 ? count : first, error);
    } finally {
      (timer as Timer | null)?.cancel();
    }
  }
}
