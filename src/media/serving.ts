/**
 * Serving incoming media (`GET /media/{media_id}`, DECISIONS 15; docs/api.md, Media): who may read it (the account's
 * token, or a valid signature), what its state answers (409 `Media not ready` after a short bounded wait while it
 * downloads, 410 `Media expired` after retention, 404 for another account's, unknown or never kept media), and the
 * bytes, whole or one range (206; 416 for a range outside them), streamed from the chunk store.
 *
 * Owns: those rules and the range's reading. Must never: read a whole piece of media into memory, tell another
 * account's media apart from unknown media, or serve bytes to a request whose signature does not hold.
 */
import { Readable, type Writable } from 'node:stream';
import { sleep, type Clock } from '../clock.js';
import { ApiError } from '../errors.js';
import type { Store } from '../store/store.js';
import { readRange } from './chunks.js';
import { incomingMediaRepository, type IncomingMediaRow } from './incoming-repository.js';
import type { MediaLinks } from './links.js';
import { mediaRepository } from './repository.js';

/** The caller: an account (its token) or the holder of a signed URL. */
export type MediaAccess = { readonly accountId: number } | { readonly expires: string; readonly signature: string };

export interface ServedMedia {
  readonly status: 200 | 206;
  readonly headers: Record<string, string>;
  readonly body: Readable;
}

export interface MediaServingOptions {
  readonly store: Store;
  readonly links: MediaLinks;
  /** Real time: the wait for a download under way is a request's, never a test clock's. */
  readonly clock: Clock;
  /** How long a request for media still downloading waits before 409 (default 5 s). */
  readonly readyWaitMs?: number;
}

const POLL_MS = 200;

export class MediaServing {
  constructor(private readonly options: MediaServingOptions) {}

  /** `output`, when given, is where the body will be written: each chunk is read once the one before is out. */
  async open(mediaId: string, access: MediaAccess, range: string | undefined, output?: Writable): Promise<ServedMedia> {
    if ('signature' in access) {
      const check = this.options.links.check(mediaId, access.expires, access.signature);
      if (check === 'invalid') throw new ApiError('MEDIA_SIGNATURE_INVALID');
      if (check === 'expired') throw new ApiError('MEDIA_SIGNATURE_EXPIRED');
    }
    const row = await this.ready(mediaId, 'accountId' in access ? access.accountId : null);
    const size = (await mediaRepository.layout(this.options.store.db, mediaId)).reduce((sum, c) => sum + c.size, 0);
    const headers: Record<string, string> = {
      'content-type': row.mimetype,
      'accept-ranges': 'bytes',
      'cache-control': 'private, max-age=3600',
      ...(row.file_name === null
        ? {}
        : { 'content-disposition': `inline; filename*=UTF-8''${encodeURIComponent(row.file_name)}` }),
    };
    const wanted = range === undefined ? null : parseRange(range, size);
    if (wanted === 'unsatisfiable') {
      throw new ApiError('RANGE_NOT_SATISFIABLE', { headers: { 'content-range': `bytes */${size}` } });
    }
    const [start, end] = wanted ?? [0, size - 1];
    const written = output === undefined ? undefined : () => writtenOut(output);
    const body = Readable.from(size === 0 ? [] : readRange(this.options.store.db, mediaId, start, end, written), {
      objectMode: false,
    });
    headers['content-length'] = String(size === 0 ? 0 : end - start + 1);
    if (wanted === null) return { status: 200, headers, body };
    headers['content-range'] = `bytes ${start}-${end}/${size}`;
    return { status: 206, headers, body };
  }

  /** The row once its bytes are stored; waits a little while it is pending. */
  private async ready(mediaId: string, accountId: number | null): Promise<IncomingMediaRow> {
    const { store, clock } = this.options;
    const deadline = clock.now() + (this.options.readyWaitMs ?? 5_000);
    for (;;) {
      const row = await incomingMediaRepository.find(store.db, mediaId);
      if (row === undefined || (accountId !== null && row.account_id !== accountId)) {
        throw new ApiError('MEDIA_NOT_FOUND');
      }
      switch (row.status) {
        case 'stored':
          return row;
        case 'expired':
          throw new ApiError('MEDIA_EXPIRED');
        case 'too_large':
        case 'failed':
          throw new ApiError('MEDIA_NOT_FOUND', { error: `the media was not kept (${row.status})` });
        case 'pending':
          if (clock.now() >= deadline) throw new ApiError('MEDIA_NOT_READY', { headers: { 'retry-after': '5' } });
          await sleep(clock, POLL_MS);
      }
    }
  }
}

/**
 * True once `output` has written out everything it was given (it emits `drain` when what it held back is out);
 * false when that cannot be known: it holds back less than its limit (no `drain` will come), or it closed.
 */
function writtenOut(output: Writable): Promise<boolean> {
  if (output.destroyed) return Promise.resolve(false);
  if (!output.writableNeedDrain) return Promise.resolve(output.writableLength === 0);
  return new Promise((resolve) => {
    const settle = (drained: boolean) => () => {
      output.off('drain', onDrain);
      output.off('close', onClose);
      resolve(drained);
    };
    const onDrain = settle(true);
    const onClose = settle(false);
    output.on('drain', onDrain);
    output.on('close', onClose);
  });
}

/**
 * One `bytes=` range as [start, end] inclusive; null to serve the whole (absent, malformed or several ranges, which
 * a server may ignore); `unsatisfiable` when it starts past the end.
 */
export function parseRange(header: string, size: number): [number, number] | null | 'unsatisfiable' {
  const match = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (match === null) return null;
  const [, first, last] = match;
  if (first === '' && last === '') return null;
  if (first === '') {
    const suffix = Number(last);
    if (suffix === 0 || size === 0) return 'unsatisfiable';
    return [Math.max(0, size - suffix), size - 1];
  }
  const start = Number(first);
  const end = last === '' ? size - 1 : Math.min(Number(last), size - 1);
  if (last !== '' && Number(last) < start) return null;
  if (start >= size) return 'unsatisfiable';
  return [start, end];
}
