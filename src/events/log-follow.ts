/**
 * Following the event log (log.ts) live: one `LogWatch` per process says "the log may have grown", and each
 * `LogTail` (a stream consumer, a broker publisher) reads after its own cursor when told, in order, never skipping.
 *
 * Wake-ups, cheapest first: the EventSignal rung after a commit in this process that recorded events; on
 * PostgreSQL, the `e` notification other nodes' commits send (a trigger of the log table, 013d; the cluster listener
 * passes it to `ring`); and a poll of the log's head every `pollMs` (default 1 s, the deliverer's own poll), which
 * finds what no ring announced (a commit of another process without the cluster listener, or rows a long
 * transaction held behind the read horizon). The poll is one query per process however many tails follow, and tails
 * woken together at the same cursor with the same filter share one read (shared-reads.ts).
 *
 * Owns: the listeners, the one poll timer, and each tail's cursor and read loop.
 * Must never: be needed for the order or completeness of what a tail reads (readLog is); poll faster than `pollMs`;
 * read for a tail while its consumer is still taking the previous batch.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Clock, Timer } from '../clock.js';
import type { Db } from '../store/schema.js';
import { WakeLoop, type NextRun } from '../wake-loop.js';
import { logHead, readLog, type LogFilter, type LoggedEvent } from './log.js';
import { SharedReads } from './shared-reads.js';
import type { EventSignal } from './signal.js';

/** The notification the log table's trigger sends on the cluster channel once per inserting transaction (013d). */
export const EVENTS_APPENDED_SIGNAL = 'e';

export interface LogWatchOptions {
  readonly db: Db;
  readonly signal: EventSignal;
  readonly clock: Clock;
  readonly logger: FastifyBaseLogger;
  /** Between two looks at the log's head while anyone follows (default 1,000 ms). */
  readonly pollMs?: number;
}

export class LogWatch {
  private readonly listeners = new Set<() => void>();
  private readonly unsubscribe: () => void;
  private readonly pollMs: number;
  private timer: Timer | null = null;
  private head: string | null | undefined = undefined;
  private stopped = false;
  /** Tails at the same cursor with the same filter, woken by the same ring, share one read (shared-reads.ts). */
  private readonly reads = new SharedReads<LoggedEvent[]>();

  constructor(private readonly options: LogWatchOptions) {
    this.pollMs = options.pollMs ?? 1_000;
    this.unsubscribe = options.signal.subscribe(this.ring);
  }

  /** The log may have grown (a commit here, or another node's notification): every follower looks. */
  readonly ring = (): void => {
    this.reads.ring();
    for (const listener of this.listeners) listener();
  };

  /** readLog, shared with the other tails asking for the same rows since the last ring. */
  read(db: Db, after: string | null, filter: LogFilter, limit: number): Promise<LoggedEvent[]> {
    return this.reads.read(`${after}|${limit}|${JSON.stringify(filter)}`, () => readLog(db, after, filter, limit));
  }

  /** `listener` runs whenever the log may have grown; the returned function stops that. */
  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    if (this.timer === null && !this.stopped) this.arm();
    return () => {
      this.listeners.delete(listener);
      if (this.listeners.size === 0) this.disarm();
    };
  }

  /** How many follow (for metrics and tests). */
  get followers(): number {
    return this.listeners.size;
  }

  stop(): void {
    this.stopped = true;
    this.unsubscribe();
    this.disarm();
    this.listeners.clear();
  }

  private arm(): void {
    this.timer = this.options.clock.after(this.pollMs, () => {
      this.timer = null;
      void this.poll().finally(() => {
        if (!this.stopped && this.listeners.size > 0 && this.timer === null) this.arm();
      });
    });
  }

  private disarm(): void {
    this.timer?.cancel();
    this.timer = null;
    this.head = undefined;
  }

  private async poll(): Promise<void> {
    try {
      const head = await logHead(this.options.db);
      const moved = this.head !== undefined && head !== this.head;
      this.head = head;
      if (moved) this.ring();
    } catch (error) {
      this.options.logger.warn({ err: error }, 'looking at the event log failed; trying again at the next poll');
    }
  }
}

export interface LogTailOptions {
  readonly db: Db;
  readonly watch: LogWatch;
  readonly clock: Clock;
  readonly filter: LogFilter;
  /** Read after this cursor; null: from the oldest event kept. */
  readonly after: string | null;
  /** Events per read (default 100). */
  readonly batch?: number;
  /**
   * Takes the next events, in order. The tail reads again only once it resolves; `false` stops the tail (the
   * consumer went away). A throw stops the tail too, and goes to `onStop`.
   */
  readonly deliver: (events: readonly LoggedEvent[]) => Promise<boolean> | boolean;
  /** The store failed a read: tried again after `retryMs` (default 1,000 ms). */
  readonly onReadError?: (error: unknown) => void;
  readonly retryMs?: number;
  /** The tail stopped by itself (deliver said so or threw). */
  readonly onStop?: (error?: unknown) => void;
}

export class LogTail {
  private current: string | null;
  private readonly loop: WakeLoop;
  private unsubscribe: (() => void) | null = null;
  private ended = false;

  constructor(private readonly options: LogTailOptions) {
    this.current = options.after;
    this.loop = new WakeLoop({
      run: () => this.step(),
      onError: (error) => options.onReadError?.(error),
      afterErrorMs: () => options.retryMs ?? 1_000,
      clock: options.clock,
    });
  }

  /** The cursor of the last event delivered (or the one it started after). */
  get cursor(): string | null {
    return this.current;
  }

  start(): void {
    this.unsubscribe = this.options.watch.subscribe(() => this.loop.wake());
    this.loop.wake();
  }

  /** No read starts any more; resolves once the one in flight (and its delivery) has ended. */
  async stop(): Promise<void> {
    this.ended = true;
    this.unsubscribe?.();
    this.unsubscribe = null;
    await this.loop.stop();
  }

  private async step(): Promise<NextRun> {
    if (this.ended) return null;
    const batch = this.options.batch ?? 100;
    const events = await this.options.watch.read(this.options.db, this.current, this.options.filter, batch);
    if (events.length === 0) return null;
    let more: boolean;
    try {
      more = await this.options.deliver(events);
    } catch (error) {
      this.finish(error);
      return null;
    }
    // The consumer has them: the cursor moves past them whether or not it wants more.
    this.current = events[events.length - 1]!.cursor;
    if (!more) {
      this.finish();
      return null;
    }
    // A full batch: there may be more; read again as soon as this run ends.
    if (events.length === batch) this.loop.wake();
    return null;
  }

  private finish(error?: unknown): void {
    if (this.ended) return;
    this.ended = true;
    this.unsubscribe?.();
    this.unsubscribe = null;
    this.loop.quiet();
    this.options.onStop?.(error);
  }
}
