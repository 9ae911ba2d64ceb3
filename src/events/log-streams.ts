/**
 * The live consumers of the event log (DECISIONS 17; docs/events.md): each SSE response and WebSocket follows the
 * log from its cursor through a LogTail (log-follow.ts), with a bound on what it can hold in the gateway's memory.
 *
 * The bound: a consumer's frames are written a batch (at most `batch` events, 100) at a time; once more than
 * `highWaterBytes` (256 KiB) wait in its socket's buffer, nothing more is read for it until that batch has left.
 * So one consumer holds at most about 256 KiB plus one batch, however far behind it is: a consumer that reads
 * slowly is simply served at its own pace from the store. One that takes nothing for `stallMs` (30 s) while its
 * buffer is over the bound is closed with the reason `consumer too slow`, and resumes by its cursor with nothing
 * lost. Every `heartbeatMs` (15 s, on the injected clock) an idle consumer gets a heartbeat (an SSE comment, a
 * WebSocket ping).
 *
 * Owns: the open consumers (closed at shutdown), their tails, timers and the bound.
 * Must never: drop or reorder an event for a consumer it keeps open; buffer past the bound; outlive the app.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Clock, Timer } from '../clock.js';
import type { Db } from '../store/schema.js';
import { LogTail, type LogWatch } from './log-follow.js';
import { logHead, type LogFilter, type LoggedEvent } from './log.js';

export interface StreamSettings {
  /** Bytes waiting in a consumer's socket beyond which no more is read for it until they leave (default 256 KiB). */
  readonly highWaterBytes: number;
  /** How long a consumer over the bound may take nothing before it is closed (default 30 s). */
  readonly stallMs: number;
  /** Between two heartbeats (default 15 s). */
  readonly heartbeatMs: number;
  /** Events read (and written) at once (default 100). */
  readonly batch: number;
  /** After a polite close, how long before the connection is cut (default 1 s). */
  readonly closeGraceMs: number;
}

export const DEFAULT_STREAM_SETTINGS: StreamSettings = {
  highWaterBytes: 256 * 1024,
  stallMs: 30_000,
  heartbeatMs: 15_000,
  batch: 100,
  closeGraceMs: 1_000,
};

export const SLOW_CONSUMER_REASON = 'consumer too slow: resume after the last cursor you processed';
export const SHUTDOWN_REASON = 'the gateway is shutting down: resume after the last cursor you processed';

/** One consumer's connection, as a stream sees it (an SSE response, a WebSocket). */
export interface StreamSink {
  /** The events as one write; `done` runs once they have left for the socket (or it failed). */
  write(events: readonly LoggedEvent[], done: () => void): void;
  /** Bytes waiting to be sent. */
  buffered(): number;
  heartbeat(): void;
  /** Says why (if the protocol can), then closes; cut after `graceMs` if it has not closed by then. */
  close(reason: string, graceMs: number): void;
  /** Runs once the connection has gone, whoever closed it. */
  onGone(listener: () => void): void;
}

export interface LogStreamsOptions {
  readonly db: Db;
  readonly watch: LogWatch;
  readonly clock: Clock;
  readonly logger: FastifyBaseLogger;
  readonly settings?: Partial<StreamSettings>;
}

interface Open {
  readonly sink: StreamSink;
  readonly tail: LogTail;
}

export class LogStreams {
  readonly settings: StreamSettings;
  private readonly open = new Set<Open>();
  private closing = false;

  constructor(private readonly options: LogStreamsOptions) {
    this.settings = { ...DEFAULT_STREAM_SETTINGS, ...options.settings };
  }

  /** How many consumers are open. */
  get size(): number {
    return this.open.size;
  }

  /** Where a consumer that named no cursor starts: after the newest event a reader sees now. */
  head(): Promise<string | null> {
    return logHead(this.options.db);
  }

  /** Follows the log into `sink` from `after` until the consumer goes (or is closed). */
  follow(sink: StreamSink, filter: LogFilter, after: string | null): void {
    const { clock, logger } = this.options;
    const settings = this.settings;
    if (this.closing) {
      sink.close(SHUTDOWN_REASON, settings.closeGraceMs);
      return;
    }
    let gone = false;
    let heartbeat: Timer | null = null;
    const beat = (): void => {
      heartbeat = clock.after(settings.heartbeatMs, () => {
        if (gone) return;
        if (sink.buffered() <= settings.highWaterBytes) sink.heartbeat();
        beat();
      });
    };
    const tail = new LogTail({
      db: this.options.db,
      watch: this.options.watch,
      clock,
      filter,
      after,
      batch: settings.batch,
      deliver: async (events) => {
        if (gone) return false;
        let flushed!: () => void;
        const left = new Promise<void>((resolve) => (flushed = resolve));
        sink.write(events, flushed);
        if (sink.buffered() <= settings.highWaterBytes) return true;
        // Over the bound: wait for this batch to leave, at most `stallMs`.
        let stall: Timer | null = null;
        const stalled = new Promise<boolean>((resolve) => {
          stall = clock.after(settings.stallMs, () => resolve(true));
        });
        const tooSlow = await Promise.race([left.then(() => false), stalled]);
        (stall as Timer | null)?.cancel();
        if (gone) return false;
        if (tooSlow) {
          logger.info({ buffered: sink.buffered() }, 'event stream consumer too slow; closed');
          sink.close(SLOW_CONSUMER_REASON, settings.closeGraceMs);
          return false;
        }
        return true;
      },
      onReadError: (error) => logger.warn({ err: error }, 'reading the event log for a stream failed; trying again'),
      onStop: (error) => {
        if (error !== undefined) logger.warn({ err: error }, 'an event stream failed; closed');
        if (!gone) sink.close(error === undefined ? SLOW_CONSUMER_REASON : 'internal error', settings.closeGraceMs);
      },
    });
    const entry: Open = { sink, tail };
    this.open.add(entry);
    sink.onGone(() => {
      gone = true;
      heartbeat?.cancel();
      this.open.delete(entry);
      void tail.stop();
    });
    beat();
    tail.start();
  }

  /** Closes every consumer (each can resume by its cursor elsewhere); no new one is followed. */
  async closeAll(): Promise<void> {
    this.closing = true;
    const open = [...this.open];
    for (const { sink } of open) sink.close(SHUTDOWN_REASON, this.settings.closeGraceMs);
    await Promise.all(open.map(({ tail }) => tail.stop()));
  }
}
