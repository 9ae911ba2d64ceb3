/**
 * The background download of incoming media (DECISIONS 15; docs/internals.md, Incoming media): rows `pending` in
 * `incoming_media` are fetched through their device's connection, streamed into the chunk store, and marked
 * `stored`, `too_large` or (after 3 retries with backoff) `failed`. Durable: the rows are the queue, so a restart
 * (or another node taking the device over) picks up what was left, partial bytes thrown away first.
 *
 * Owns: when a download runs (a wake loop: woken by a new pending row, a device connecting here, or the next retry's
 * time), the size limit while bytes arrive, the stall guard, and the retry count.
 * Must never: hold more than a chunk of media in memory per download (DOWNLOADS_AT_ONCE at a time), download for a device this node does not hold (the
 * cluster's holdings are asked, in this one place), count a try made while the device is offline, or hold up the
 * incoming message or its event (they are stored and announced before the row is read here).
 */
import { createHash } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import { doubling } from '../backoff.js';
import type { Clock } from '../clock.js';
import type { DeviceHoldings } from '../cluster/holdings.js';
import type { NetworkConnection, NetworkEvent } from '../network/network.js';
import { NetworkMediaError, NetworkUnavailableError } from '../network/network.js';
import type { Store } from '../store/store.js';
import { WakeLoop } from '../wake-loop.js';
import { ChunkWriter, deleteMedia } from './chunks.js';
import { incomingMediaRepository, type IncomingMediaRow } from './incoming-repository.js';

/** Retries after the first try; then `failed`. */
export const MEDIA_RETRIES = 3;
const BATCH = 20;
/** Downloads run side by side in this process, each holding at most a chunk in memory. */
const DOWNLOADS_AT_ONCE = 4;

/** What the downloader needs of the devices' connections. */
export interface MediaConnections {
  connection(deviceId: number): NetworkConnection | null;
  isConnected(deviceId: number): boolean;
  onEvent(listener: (deviceId: number, event: NetworkEvent) => void): () => void;
}

export interface MediaDownloaderOptions {
  readonly store: Store;
  readonly clock: Clock;
  readonly logger: FastifyBaseLogger;
  readonly connections: MediaConnections;
  readonly holdings: DeviceHoldings;
  readonly maxBytes: number;
  /** The wait before the first retry, doubled for each next one (default 10 s). */
  readonly retryBaseMs?: number;
  /** A download with no byte arriving for this long is given up (a failed try; default 60 s). */
  readonly stallMs?: number;
}

class TooLarge extends Error {}
class Stopped extends Error {}

export class MediaDownloader {
  private readonly loop: WakeLoop;
  /** Devices connected here: only their rows are looked at. */
  private readonly connected = new Set<number>();
  private unsubscribe: (() => void) | null = null;
  private readonly stopping = new AbortController();

  constructor(private readonly options: MediaDownloaderOptions) {
    this.loop = new WakeLoop({
      run: () => this.run(),
      clock: options.clock,
      afterErrorMs: (failures) => doubling(1_000, 60_000, failures),
      onError: (error, failures) =>
        options.logger.warn({ err: error, failures }, 'media: looking for downloads failed; trying again'),
    });
  }

  /** Listens for devices connecting here (before they connect: listed before `devices-open`). */
  start(): void {
    this.unsubscribe = this.options.connections.onEvent((deviceId, event) => {
      if (event.type === 'connected') {
        this.connected.add(deviceId);
        this.loop.wake();
      } else if (event.type === 'disconnected' || event.type === 'logged_out') {
        this.connected.delete(deviceId);
      }
    });
  }

  /** A row was written `pending`: look now. */
  wake(): void {
    this.loop.wake();
  }

  /** Resolves once no run is in flight (tests). */
  settled(): Promise<void> {
    return this.loop.settled();
  }

  async close(): Promise<void> {
    this.unsubscribe?.();
    this.stopping.abort();
    await this.loop.stop();
  }

  private devices(): number[] {
    return [...this.connected].filter(
      (id) => this.options.connections.isConnected(id) && this.options.holdings.epochOf(id) !== null,
    );
  }

  private async run(): Promise<number | null> {
    const { store, clock } = this.options;
    for (;;) {
      const devices = this.devices();
      const due = await incomingMediaRepository.due(store.db, devices, clock.now(), BATCH);
      if (due.length === 0) return incomingMediaRepository.nextDue(store.db, devices);
      // A few at a time: a download mostly waits (on the network, on the store), so one after another left the
      // process idle (bench/README.md, Incoming media). Each row of a batch is downloaded once.
      const waiting = [...due];
      const worker = async (): Promise<void> => {
        for (let row = waiting.shift(); row !== undefined; row = waiting.shift()) {
          if (this.stopping.signal.aborted) return;
          await this.download(row);
        }
      };
      const ended = await Promise.allSettled(Array.from({ length: Math.min(DOWNLOADS_AT_ONCE, due.length) }, worker));
      const failure = ended.find((outcome) => outcome.status === 'rejected');
      if (failure !== undefined) throw failure.reason;
      if (this.stopping.signal.aborted) return null;
    }
  }

  private async download(row: IncomingMediaRow): Promise<void> {
    const { store, clock, maxBytes } = this.options;
    const connection = this.options.connections.connection(row.device_id);
    if (connection === null || this.options.holdings.epochOf(row.device_id) === null) {
      this.connected.delete(row.device_id);
      return;
    }
    if (row.size !== null && row.size > maxBytes) {
      await incomingMediaRepository.markEnded(store.db, row.media_id, 'too_large', row.attempts, row.size);
      return;
    }
    // Bytes of an earlier try cut short (a crash, a restart) are thrown away: each try starts from the first byte.
    await deleteMedia(store.db, [row.media_id]);
    const writer = new ChunkWriter(store.db, clock, row.media_id);
    const hash = createHash('sha256');
    try {
      if (connection.downloadMedia === undefined) throw new NetworkMediaError('no media downloads', 'permanent');
      const bytes = await connection.downloadMedia({
        ref: row.network_ref ?? '',
        ...(row.size === null ? {} : { size: row.size }),
        ...(row.sha256 === null ? {} : { sha256: row.sha256 }),
      });
      let received = 0;
      await this.copy(bytes, async (chunk) => {
        received += chunk.byteLength;
        if (received > maxBytes) throw new TooLarge();
        hash.update(chunk);
        await writer.write(chunk);
      });
      await writer.finish();
      const sha256 = hash.digest('hex');
      if (row.sha256 !== null && row.sha256 !== sha256) {
        throw new NetworkMediaError('the bytes do not match the announced hash', 'transient');
      }
      if (
        !(await incomingMediaRepository.markStored(store.db, row.media_id, writer.bytesWritten, sha256, clock.now()))
      ) {
        await deleteMedia(store.db, [row.media_id]);
      }
    } catch (error) {
      await deleteMedia(store.db, [row.media_id]);
      await this.failed(row, error, writer.bytesWritten);
    }
  }

  /** Reads `bytes` into `take` one chunk at a time; gives up on a stall or a stop. */
  private async copy(bytes: AsyncIterable<Uint8Array>, take: (chunk: Uint8Array) => Promise<void>): Promise<void> {
    const iterator = bytes[Symbol.asyncIterator]();
    const stallMs = this.options.stallMs ?? 60_000;
    let finished = false;
    try {
      for (;;) {
        let timer: NodeJS.Timeout | undefined;
        let onStop: (() => void) | undefined;
        const next = await Promise.race([
          iterator.next(),
          new Promise<never>((_resolve, reject) => {
            timer = setTimeout(() => reject(new NetworkMediaError('no bytes arrived in time', 'transient')), stallMs);
            onStop = () => reject(new Stopped());
            this.stopping.signal.addEventListener('abort', onStop, { once: true });
            if (this.stopping.signal.aborted) onStop();
          }),
        ]).finally(() => {
          clearTimeout(timer);
          if (onStop !== undefined) this.stopping.signal.removeEventListener('abort', onStop);
        });
        if (next.done === true) {
          finished = true;
          return;
        }
        await take(next.value);
      }
    } finally {
      // The rest is not wanted (too large, stalled, stopped): the network's stream is told, not read through.
      if (!finished) void Promise.resolve(iterator.return?.()).catch(() => undefined);
    }
  }

  private async failed(row: IncomingMediaRow, error: unknown, received: number): Promise<void> {
    const { store, clock, logger, maxBytes } = this.options;
    if (error instanceof TooLarge) {
      logger.info({ mediaId: row.media_id, maxBytes }, 'media: incoming media over the size limit; not kept');
      await incomingMediaRepository.markEnded(store.db, row.media_id, 'too_large', row.attempts + 1, row.size);
      return;
    }
    // Offline or stopping: not a try (the row waits, as it is, for the device to connect again or the next start).
    if (error instanceof Stopped) return;
    if (error instanceof NetworkUnavailableError) {
      this.connected.delete(row.device_id);
      return;
    }
    const attempts = row.attempts + 1;
    const permanent = error instanceof NetworkMediaError && error.kind === 'permanent';
    const detail = { err: error, mediaId: row.media_id, messageId: row.message_id, attempts, received };
    if (permanent || attempts > MEDIA_RETRIES) {
      logger.warn(detail, 'media: download of incoming media failed; given up');
      await incomingMediaRepository.markEnded(store.db, row.media_id, 'failed', attempts, null);
      return;
    }
    logger.info(detail, 'media: download of incoming media failed; retrying');
    const wait = doubling(this.options.retryBaseMs ?? 10_000, 10 * 60_000, attempts);
    await incomingMediaRepository.retryAt(store.db, row.media_id, attempts, clock.now() + wait);
  }
}
