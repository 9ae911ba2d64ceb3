/**
 * The live consumers of the event log (DECISIONS 17; docs/events.md): each SSE response and WebSocket follows the
 * log from its cursor through a LogTail (log-follow.ts), with a bound on what it can hold in the gateway's memory.
 *
 * The bound: a consumer's frames are written in chunks of about 16 KiB; once more than `highWaterBytes` (256 KiB)
 * wait in its socket's buffer, nothing more is written (nor read from the store) for it until that chunk has left.
 * So one consumer holds at most about 256 KiB + 16 KiB + one event in the gateway's memory (and one read batch
 * of at most `batch` events, 100, waiting to be written), however far behind it is: a consumer that reads slowly
 * is simply served at its own pace from the store. One that takes nothing for `stallMs` (30 s) while its
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
  /** After a polite close, how long before the connection is cut (default 1 s, on the injected clock). */
  readonly closeGraceMs: number;
}

export const DEFAULT_STREAM_SETTINGS: StreamSettings = {
  highWaterBytes: 256 * 1024,
  stallMs: 30_000,
  heartbeatMs: 15_000,
  batch: 100,
  closeGraceMs: 1_000,
};

/** Frames are written in chunks of about this many bytes (the bound's step). */
export const CHUNK_BYTES = 16 * 1024;

export const SLOW_CONSUMER_REASON = 'consumer too slow: resume after the last cursor you processed';
export const SHUTDOWN_REASON = 'the gateway is shutting down: resume after the last cursor you processed';

/** One consumer's connection, as a stream sees it (an SSE response, a WebSocket). */
export interface StreamSink {
  readonly kind: StreamKind;
  /** The events as one write; `done` runs once they have left for the socket (or it failed). */
  write(events: readonly LoggedEvent[], done: () => void): void;
  /** Bytes waiting to be sent. */
  buffered(): number;
  heartbeat(): void;
  /** Says why (if the protocol can), then closes politely; a second call does nothing. */
  close(reason: string): void;
  /** Cuts the connection (a consumer that did not take the polite close), letting go of what it buffered. */
  destroy(): void;
  /** Runs once the connection has gone, whoever closed it. */
  onGone(listener: () => void): void;
}

export type StreamKind = 'sse' | 'websocket';

/** The consumers open on this node, by kind. */
export type StreamCounts = Record<StreamKind, number>;

export interface LogStreamsOptions {
  readonly db: Db;
  readonly watch: LogWatch;
  readonly clock: Clock;
  readonly logger: FastifyBaseLogger;
  readonly settings?: Partial<StreamSettings>;
}

interface Open {
  /** Closes politely, then cuts after the grace. */
  readonly close: (reason: string) => void;
  readonly tail: LogTail;
  readonly sink: StreamSink;
  /** Whose events it follows (the filter's account). */
  readonly accountId: number | undefined;
}

export class LogStreams {
  readonly settings: StreamSettings;
  private readonly open = new Set<Open>();
  private closing = false;
  private peak = 0;
  private slow = 0;

  constructor(private readonly options: LogStreamsOptions) {
    this.settings = { ...DEFAULT_STREAM_SETTINGS, ...options.settings };
  }

  /** How many consumers are open. */
  get size(): number {
    return this.open.size;
  }

  /** The consumers of the account open on this node, by kind (`GET /gateway`). */
  consumersOf(accountId: number): StreamCounts {
    const counts: StreamCounts = { sse: 0, websocket: 0 };
    for (const entry of this.open) if (entry.accountId === accountId) counts[entry.sink.kind] += 1;
    return counts;
  }

  /** The most bytes seen waiting for one consumer (the bound at work: tests and metrics). */
  get peakBuffered(): number {
    return this.peak;
  }

  /** The most bytes waiting for one of the consumers open now (the peak above is since start). */
  get bufferedNow(): number {
    let most = 0;
    for (const entry of this.open) most = Math.max(most, entry.sink.buffered());
    return most;
  }

  /** How many consumers were closed for being too slow since start. */
  get closedSlow(): number {
    return this.slow;
  }

  /** Where a consumer that named no cursor starts: after the newest event a reader sees now. */
  head(): Promise<string | null> {
    return logHead(this.options.db);
  }

  /** Follows the log into `sink` from `after` until the consumer goes (or is closed). */
  follow(sink: StreamSink, filter: LogFilter, after: string | null): void {
    const { clock, logger } = this.options;
    const settings = this.settings;
    let gone = false;
    let cut: Timer | null = null;
    const close = (reason: string): void => {
      if (gone || cut !== null) return;
      sink.close(reason);
      cut = clock.after(settings.closeGraceMs, () => {
        if (!gone) sink.destroy();
      });
    };
    if (this.closing) {
      close(SHUTDOWN_REASON);
      sink.onGone(() => {
        gone = true;
        cut?.cancel();
      });
      return;
    }
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
        for (let i = 0; i < events.length;) {
          if (gone || cut !== null) return false;
          let end = i;
          for (let bytes = 0; end < events.length && (end === i || bytes < CHUNK_BYTES); end++) {
            bytes += events[end]!.body.length;
          }
          const chunk = events.slice(i, end);
          i = end;
          const left = new Promise<void>((resolve) => sink.write(chunk, resolve));
          const buffered = sink.buffered();
          if (buffered > this.peak) this.peak = buffered;
          if (buffered <= settings.highWaterBytes) continue;
          // Over the bound: nothing more until this chunk has left, for at most `stallMs`.
          if (!(await this.leaves(left))) {
            if (!gone) {
              this.slow += 1;
              logger.info({ buffered: sink.buffered() }, 'event stream consumer too slow; closed');
            }
            close(SLOW_CONSUMER_REASON);
            return false;
          }
        }
        return !gone;
      },
      onReadError: (error) => logger.warn({ err: error }, 'reading the event log for a stream failed; trying again'),
      onStop: (error) => {
        if (error !== undefined) logger.warn({ err: error }, 'an event stream failed; closed');
        close(error === undefined ? SLOW_CONSUMER_REASON : 'internal error');
      },
    });
    const entry: Open = { close, tail, sink, accountId: filter.accountId };
    this.open.add(entry);
    sink.onGone(() => {
      gone = true;
      heartbeat?.cancel();
      cut?.cancel();
      this.open.delete(entry);
      void tail.stop();
    });
    beat();
    tail.start();
  }

  /** Whether `left` settles within `stallMs` of the clock. */
  private async leaves(left: Promise<void>): Promise<boolean> {
    let stall: Timer | null = null;
    const stalled = new Promise<false>((resolve) => {
      stall = this.options.clock.after(this.settings.stallMs, () => resolve(false));
    });
    const result = await Promise.race([left.then(() => true as const), stalled]);
    (stall as Timer | null)?.cancel();
    return result;
  }

  /** Closes every consumer (each can resume by its cursor elsewhere); no new one is followed. */
  async closeAll(): Promise<void> {
    this.closing = true;
    const open = [...this.open];
    for (const { close } of open) close(SHUTDOWN_REASON);
    await Promise.all(open.map(({ tail }) => tail.stop()));
  }
}
