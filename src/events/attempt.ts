/**
 * One HTTP attempt of one webhook delivery.
 *
 * Owns: the POST itself (signed headers, an account webhook's custom headers, the exact body given), the time
 * limit on the whole exchange, reading just enough of the answer (all of a
 * 2xx answer up to `answerLimit` bytes when it may carry replies), and
 * turning whatever happened into a line of the delivery log (status,
 * latency, error).
 * Must never: follow a redirect (a 3xx is a failed attempt, as Standard
 * Webhooks expects), open a connection other than through the guarded
 * dispatcher it is given, or throw: every outcome is a result.
 */
import { performance } from 'node:perf_hooks';
import { request, type Dispatcher } from 'undici';
import { PRIVATE_DESTINATION_HINT, findBlockedAddressError, outboundErrorCode } from '../outbound/index.js';
import type { SignedHeaders } from './signing.js';

/** The limit on one attempt, connect to the answer's last byte, unless the deliverer is given another (DECISIONS 6: 5 s). */
export const DEFAULT_ATTEMPT_TIMEOUT_MS = 5_000;

export interface AttemptInput {
  readonly url: string;
  readonly headers: SignedHeaders;
  /** An account webhook's custom headers (lower-case names; checked when the webhook was saved). */
  readonly custom?: Readonly<Record<string, string>>;
  readonly body: string;
  readonly dispatcher: Dispatcher;
  readonly timeoutMs: number;
  /** The attempt's own controller; aborting it (shutdown) ends the attempt as `aborted`, to be handed back. */
  readonly abort: AbortController;
  /** Read a 2xx answer's body, up to this many bytes (reply by response); absent: the body is discarded. */
  readonly answerLimit?: number;
}

/** A 2xx answer's body, when asked for: its text, or that it went past the limit (then not kept). */
export type Answer = { readonly text: string } | { readonly tooLarge: true };

export interface AttemptResult {
  /** A 2xx answer. */
  readonly ok: boolean;
  /** Cut short by shutdown: not a real attempt, nothing to log. */
  readonly aborted: boolean;
  readonly httpStatus: number | null;
  readonly latencyMs: number;
  readonly error: string | null;
  /** Only for a 2xx answer when `answerLimit` was given. */
  readonly answer?: Answer;
}

/** How much of a non-2xx answer is kept in the log: enough to see what the receiver complained about. */
const ERROR_BODY_CHARS = 200;
const USER_AGENT = 'messaging-gateway-webhooks/1';

export const BLOCKED_ADDRESS_ERROR =
  'refused: the webhook URL resolves to an address that is not public (loopback, private, link-local, ...); ' +
  PRIVATE_DESTINATION_HINT;

export async function attemptDelivery(input: AttemptInput): Promise<AttemptResult> {
  const controller = input.abort;
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, input.timeoutMs);
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  try {
    const res = await request(input.url, {
      method: 'POST',
      // Custom headers go first: the signature's and the body's own headers always win.
      headers: {
        'user-agent': USER_AGENT,
        ...input.custom,
        ...input.headers,
        'content-type': 'application/json',
      },
      body: input.body,
      dispatcher: input.dispatcher,
      signal: controller.signal,
      // The overall timer is the limit; undici's own (longer) defaults must not end it first or differently.
      headersTimeout: input.timeoutMs + 1000,
      bodyTimeout: input.timeoutMs + 1000,
    });
    const latencyMs = elapsed();
    const ok = res.statusCode >= 200 && res.statusCode < 300;
    if (ok && input.answerLimit !== undefined) {
      const answer = await readAnswer(res.body, input.answerLimit);
      // Cut short by shutdown or the time limit: the receiver's answer never fully arrived, so no replies.
      if (controller.signal.aborted && !timedOut) {
        return { ok: false, aborted: true, httpStatus: null, latencyMs, error: null };
      }
      if (answer === null) {
        const error = timedOut ? `timed out after ${input.timeoutMs} ms` : 'connection closed while reading the answer';
        return { ok: false, aborted: false, httpStatus: res.statusCode, latencyMs, error };
      }
      return { ok, aborted: false, httpStatus: res.statusCode, latencyMs, error: null, answer };
    }
    if (ok) {
      // Read to the end so the connection can be reused; what it says does not matter.
      await res.body.dump({ limit: 64 * 1024 }).catch(() => undefined);
      return { ok, aborted: false, httpStatus: res.statusCode, latencyMs, error: null };
    }
    const snippet = await readSnippet(res.body);
    const error = `receiver answered HTTP ${res.statusCode}${snippet === '' ? '' : `: ${snippet}`}`;
    return { ok, aborted: false, httpStatus: res.statusCode, latencyMs, error };
  } catch (error) {
    const latencyMs = elapsed();
    if (timedOut) {
      return { ok: false, aborted: false, httpStatus: null, latencyMs, error: `timed out after ${input.timeoutMs} ms` };
    }
    if (controller.signal.aborted) return { ok: false, aborted: true, httpStatus: null, latencyMs, error: null };
    return { ok: false, aborted: false, httpStatus: null, latencyMs, error: describe(error) };
  } finally {
    clearTimeout(timer);
  }
}

/** The whole answer up to `limit` bytes; past it, only that it was too large. Null when the body broke off. */
async function readAnswer(body: AsyncIterable<Buffer> & { destroy(): unknown }, limit: number): Promise<Answer | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of body) {
      size += chunk.length;
      if (size > limit) return { tooLarge: true };
      chunks.push(chunk);
    }
  } catch {
    return null;
  } finally {
    body.destroy();
  }
  return { text: Buffer.concat(chunks).toString('utf8') };
}

async function readSnippet(body: AsyncIterable<Buffer> & { destroy(): unknown }): Promise<string> {
  let text = '';
  try {
    for await (const chunk of body) {
      text += chunk.toString('utf8');
      if (text.length >= ERROR_BODY_CHARS) break;
    }
  } catch {
    // The answer's status is what counts; a broken body only shortens the snippet.
  } finally {
    body.destroy();
  }
  return text.slice(0, ERROR_BODY_CHARS).replace(/\s+/g, ' ').trim();
}

/** A log line for a failure before any answer: what a receiver's operator can act on. */
function describe(error: unknown): string {
  if (findBlockedAddressError(error) !== undefined) return BLOCKED_ADDRESS_ERROR;
  const code = outboundErrorCode(error);
  switch (code) {
    case 'ECONNREFUSED':
      return 'connection refused';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'DNS lookup failed';
    case 'ECONNRESET':
    case 'EPIPE':
    case 'UND_ERR_SOCKET':
    case 'UND_ERR_CLOSED':
      return 'connection closed before the receiver answered';
    case 'UND_ERR_CONNECT_TIMEOUT':
      return 'timed out connecting';
    case 'UND_ERR_HEADERS_TIMEOUT':
    case 'UND_ERR_BODY_TIMEOUT':
      return 'timed out waiting for the answer';
    case 'ERR_INVALID_URL':
    case 'ERR_INVALID_ARG_VALUE':
      return 'invalid webhook URL';
    default:
      break;
  }
  if (code !== undefined && /CERT|TLS|SSL/i.test(code)) return `TLS error (${code})`;
  return code === undefined ? 'delivery failed' : `delivery failed (${code})`;
}
