// Owns downloading the bytes behind a user-supplied media URL: URL rules, manual redirects, the
// overall deadline and the size limit, and turning every failure into a MediaFetchError with a
// reason the API can map to its messages. It must never hold more than `maxBytes` of body, never
// connect except through the dispatcher it is given (which enforces the address policy), and never
// put stacks, internal paths or resolved internal addresses into `detail`.
import { performance } from 'node:perf_hooks';
import type { Dispatcher } from 'undici';
import { request } from 'undici';
import { findBlockedAddressError, outboundErrorCode } from './guarded-agent.js';

export type MediaFetchFailure =
  'invalid_url' | 'blocked_address' | 'unreachable' | 'timeout' | 'http_status' | 'too_large';

/** A media download failed. `detail` is safe to show to the API client. */
export class MediaFetchError extends Error {
  override readonly name = 'MediaFetchError';

  constructor(
    readonly reason: MediaFetchFailure,
    readonly detail: string,
    options?: { cause?: unknown; status?: number },
  ) {
    // `cause` is kept for server-side logs only; Error makes it non-enumerable, so serialising the
    // error does not leak it.
    super(detail, options?.cause === undefined ? undefined : { cause: options.cause });
    this.status = options?.status;
  }

  /** The HTTP status of the final answer, for reason 'http_status' when there was one. */
  readonly status: number | undefined;
}

export interface FetchMediaOptions {
  /** Largest accepted body, in bytes. One byte more is 'too_large'. */
  maxBytes: number;
  /** Deadline for the whole download (all hops, headers and body). Default 10000 ms. */
  timeoutMs?: number;
  /** Redirects followed before giving up. Default 3. */
  maxRedirects?: number;
  /** The guarded dispatcher (createGuardedDispatcher); it decides which addresses are reachable. */
  dispatcher: Dispatcher;
}

/** Receives a download's body chunk by chunk; the download waits for each write (backpressure). */
export interface MediaSink {
  write(chunk: Uint8Array): Promise<void>;
}

/** A download streamed to a sink: its size and first bytes (for format sniffing), never the whole body. */
export interface StreamedMedia {
  size: number;
  /** The first HEAD_BYTES bytes (fewer for a smaller body). */
  head: Uint8Array;
  contentType: string | null;
  /** The Content-Disposition header of the final answer, as sent (a file's name may be in it). */
  contentDisposition: string | null;
  finalUrl: string;
}

/** Leading bytes kept by streamMedia for sniffing the format. */
export const HEAD_BYTES = 4096;

export interface FetchedMedia {
  bytes: Uint8Array;
  /** The Content-Type header of the final answer, as sent; never trust it for the format. */
  contentType: string | null;
  /** The URL the bytes came from, after redirects. */
  finalUrl: string;
}

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

const DNS_FAILURE_CODES = new Set(['ENOTFOUND', 'EAI_AGAIN', 'EAI_NODATA', 'EAI_NONAME', 'EAI_FAIL']);
const TIMEOUT_CODES = new Set([
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'ETIMEDOUT',
]);

// Marks our own deadline, so a timeout can be told apart from any other abort.
class DeadlineExceeded extends Error {}

// The sink's own failure (a full disk, a store outage): not a download problem, so it is passed on as it was.
class SinkFailure extends Error {
  constructor(readonly original: unknown) {
    super('media sink failed');
  }
}

function parseTarget(raw: string, isRedirect: boolean): URL {
  const what = isRedirect ? 'redirect target' : 'URL';
  let url: URL;
  try {
    // No base: relative URLs are invalid for the client, and redirects are resolved by the caller.
    url = new URL(raw);
  } catch {
    throw new MediaFetchError('invalid_url', `${what} is not a valid absolute URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new MediaFetchError('invalid_url', `${what} is not an http or https URL`);
  }
  if (url.username !== '' || url.password !== '') {
    throw new MediaFetchError('invalid_url', `${what} must not contain credentials`);
  }
  if (url.hostname === '') {
    throw new MediaFetchError('invalid_url', `${what} has no host`);
  }
  return url;
}

function classify(error: unknown, signal: AbortSignal, timeoutMs: number, isRedirect: boolean): MediaFetchError {
  if (error instanceof MediaFetchError) return error;
  if (findBlockedAddressError(error)) {
    const what = isRedirect ? 'redirect target address' : 'destination address';
    return new MediaFetchError('blocked_address', `${what} is not allowed`, { cause: error });
  }
  if (signal.aborted && signal.reason instanceof DeadlineExceeded) {
    return new MediaFetchError('timeout', `no complete answer within ${timeoutMs} ms`, { cause: error });
  }
  const code = outboundErrorCode(error);
  if (code !== undefined && TIMEOUT_CODES.has(code)) {
    return new MediaFetchError('timeout', 'connection timed out', { cause: error });
  }
  if (code !== undefined && DNS_FAILURE_CODES.has(code)) {
    return new MediaFetchError('unreachable', 'host not found', { cause: error });
  }
  if (code === 'ECONNREFUSED') {
    return new MediaFetchError('unreachable', 'connection refused', { cause: error });
  }
  // Error codes are fixed identifiers (ECONNRESET, UND_ERR_SOCKET, ...), safe to show; messages
  // are not (they can carry addresses and paths).
  const safeCode = code !== undefined && /^[A-Z][A-Z0-9_]{1,40}$/.test(code) ? ` (${code})` : '';
  return new MediaFetchError('unreachable', `connection failed${safeCode}`, { cause: error });
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

// Closing the body mid-stream makes undici emit an AbortError on it; nobody listens any more, and
// an unheard 'error' event would crash the process.
function discard(body: Dispatcher.ResponseData['body']): void {
  body.on('error', () => undefined);
  if (!body.destroyed) body.destroy();
}

/** Passes the body to `each` chunk by chunk, at most `maxBytes` of it; answers the size. */
async function consumeLimited(
  body: Dispatcher.ResponseData['body'],
  maxBytes: number,
  each: (chunk: Buffer) => Promise<void> | void,
): Promise<number> {
  let total = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    total += chunk.length;
    if (total > maxBytes) {
      // Drop the chunk that crossed the limit and close the connection instead of draining it.
      discard(body);
      throw new MediaFetchError('too_large', `larger than ${maxBytes} bytes`);
    }
    await each(chunk);
  }
  return total;
}

async function readLimited(body: Dispatcher.ResponseData['body'], maxBytes: number): Promise<Uint8Array> {
  const chunks: Buffer[] = [];
  const total = await consumeLimited(body, maxBytes, (chunk) => {
    chunks.push(chunk);
  });
  // A fresh array rather than Buffer.concat: small Buffers share a pool, and `.buffer` of a pooled
  // slice would expose unrelated memory to whoever the bytes are handed to.
  const bytes = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.length;
  }
  return bytes;
}

/**
 * Downloads `url` through `options.dispatcher`. Resolves with the body only for a 2xx answer of at
 * most `maxBytes` bytes; otherwise throws MediaFetchError. Redirects (301, 302, 303, 307, 308) are
 * followed with GET, each hop checked again for scheme, credentials and address. More than
 * `maxRedirects` is 'http_status' ("too many redirects"): the final answer was not a 2xx.
 */
export async function fetchMedia(url: string, options: FetchMediaOptions): Promise<FetchedMedia> {
  return download(url, options, async (body, headers, finalUrl) => {
    const bytes = await readLimited(body, options.maxBytes);
    return { bytes, contentType: headerValue(headers['content-type'])?.trim() || null, finalUrl };
  });
}

/**
 * As fetchMedia, but the body goes to `sink` as it arrives instead of being held: memory stays at a
 * chunk whatever the size. Resolves once the last chunk is written; on failure the sink may have
 * received part of the body (the caller discards it).
 */
export async function streamMedia(url: string, options: FetchMediaOptions, sink: MediaSink): Promise<StreamedMedia> {
  return download(url, options, async (body, headers, finalUrl, deadline) => {
    const head = new Uint8Array(HEAD_BYTES);
    let headLength = 0;
    const size = await consumeLimited(body, options.maxBytes, async (chunk) => {
      if (headLength < HEAD_BYTES) {
        const take = chunk.subarray(0, HEAD_BYTES - headLength);
        head.set(take, headLength);
        headLength += take.length;
      }
      // Time spent writing is the gateway's own, not the server's: it does not count against the deadline.
      const started = performance.now();
      try {
        await sink.write(chunk);
      } catch (error) {
        throw new SinkFailure(error);
      }
      deadline.extend(performance.now() - started);
    });
    return {
      size,
      head: head.slice(0, headLength),
      contentType: headerValue(headers['content-type'])?.trim() || null,
      contentDisposition: headerValue(headers['content-disposition'])?.trim() || null,
      finalUrl,
    };
  });
}

/** The download's deadline; the consumer may push it back by time it spent on its own work. */
interface Deadline {
  extend(ms: number): void;
}

/** However slow the sink, a download never takes longer than this many times its deadline. */
const MAX_EXTENSION_FACTOR = 6;

type Consume<T> = (
  body: Dispatcher.ResponseData['body'],
  headers: Dispatcher.ResponseData['headers'],
  finalUrl: string,
  deadline: Deadline,
) => Promise<T>;

async function download<T>(url: string, options: FetchMediaOptions, consume: Consume<T>): Promise<T> {
  const { maxBytes, timeoutMs = 10_000, maxRedirects = 3, dispatcher } = options;
  if (!Number.isSafeInteger(maxBytes) || maxBytes < 0) throw new RangeError('maxBytes must be a non-negative integer');

  let target = parseTarget(url, false);
  const controller = new AbortController();
  const expire = () => controller.abort(new DeadlineExceeded());
  let timer = setTimeout(expire, timeoutMs);
  let endsAt = performance.now() + timeoutMs;
  let extended = 0;
  const deadline: Deadline = {
    extend(ms) {
      const by = Math.min(ms, timeoutMs * (MAX_EXTENSION_FACTOR - 1) - extended);
      if (by < 1 || controller.signal.aborted) return;
      extended += by;
      endsAt += by;
      clearTimeout(timer);
      timer = setTimeout(expire, Math.max(0, endsAt - performance.now()));
    },
  };
  let redirects = 0;
  try {
    for (;;) {
      const isRedirect = redirects > 0;
      let response: Dispatcher.ResponseData;
      try {
        response = await request(target, {
          method: 'GET',
          dispatcher,
          signal: controller.signal,
          headers: { accept: '*/*', 'user-agent': 'messaging-gateway' },
        });
      } catch (error) {
        throw classify(error, controller.signal, timeoutMs, isRedirect);
      }

      const { statusCode, headers, body } = response;
      try {
        if (REDIRECT_STATUSES.has(statusCode) && headerValue(headers.location) !== undefined) {
          discard(body);
          if (redirects >= maxRedirects) {
            throw new MediaFetchError('http_status', `too many redirects (more than ${maxRedirects})`, {
              status: statusCode,
            });
          }
          let next: string;
          try {
            next = new URL(headerValue(headers.location) as string, target).href;
          } catch {
            throw new MediaFetchError('invalid_url', 'redirect target is not a valid URL');
          }
          target = parseTarget(next, true);
          redirects++;
          continue;
        }

        if (statusCode < 200 || statusCode > 299) {
          discard(body);
          throw new MediaFetchError('http_status', `server answered HTTP ${statusCode}`, { status: statusCode });
        }

        const declared = Number(headerValue(headers['content-length']));
        if (Number.isFinite(declared) && declared > maxBytes) {
          discard(body);
          throw new MediaFetchError('too_large', `larger than ${maxBytes} bytes`);
        }

        return await consume(body, headers, target.href, deadline);
      } catch (error) {
        discard(body);
        if (error instanceof SinkFailure) throw error.original;
        throw classify(error, controller.signal, timeoutMs, isRedirect);
      }
    }
  } finally {
    clearTimeout(timer);
  }
}
