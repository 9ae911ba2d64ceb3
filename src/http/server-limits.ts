/**
 * The HTTP server's limits and its answers to requests that never reach a
 * route: how long a client may take to send a request, how long an idle
 * connection is kept, how many connections are held at once, and what a
 * request Node's parser refuses (unknown method, oversized headers, a bad
 * chunk, conflicting lengths, a timeout) is answered.
 *
 * Owns: the Fastify/Node server options that bound time and connections
 * (in all, and per client address: docs/hardening.md), and the `clientError`
 * handler that writes those refusals in the envelope (docs/internals.md,
 * Answers and errors).
 * Must never: write to a socket whose answer has already started, or keep a
 * refused connection open.
 */
import { maxHeaderSize } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';
import ipaddr from 'ipaddr.js';
import type { HttpLimits } from '../config.js';
import { ApiError, errorBody, type ErrorCode } from '../errors.js';

/**
 * How often Node looks for requests past their timeout. Node's default (30 s)
 * would let a stalled request live up to 30 s beyond its timeout.
 */
const TIMEOUT_CHECK_MS = 1_000;

/** The Fastify options that bound how long a client may hold a connection. */
export function serverTimeoutOptions(limits: HttpLimits) {
  return {
    requestTimeout: limits.requestTimeoutMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    http: {
      // Node's name for the time allowed for the request line and headers.
      headersTimeout: limits.headersTimeoutMs,
      connectionsCheckingInterval: Math.min(TIMEOUT_CHECK_MS, limits.headersTimeoutMs),
    },
    // Fastify's own handler answers `{"error":..,"statusCode":..}`; this one answers the envelope.
    clientErrorHandler: answerClientError,
  };
}

/** A warning about refused connections is written at most this often, whatever an attacker does. */
const REFUSAL_WARN_INTERVAL_MS = 60_000;

/**
 * The address a connection is counted under: an IPv4 address (also when it comes IPv4-mapped), or
 * the /64 of an IPv6 one, since one IPv6 client commonly has a whole /64 to pick addresses from.
 */
export function clientKey(address: string | undefined): string {
  if (address === undefined || !ipaddr.isValid(address)) return address ?? '';
  const parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv4') return parsed.toString();
  const v6 = parsed as ipaddr.IPv6;
  if (v6.isIPv4MappedAddress()) return v6.toIPv4Address().toString();
  return `${v6.parts
    .slice(0, 4)
    .map((part) => part.toString(16))
    .join(':')}::/64`;
}

/**
 * Caps the connections of the app's server (applied before it listens): in all (Node closes the
 * ones over it before they are handed over), and per client address, so that one client holding
 * half-sent requests never takes every slot and leaves none for the others.
 */
export function capConnections(app: FastifyInstance, limits: HttpLimits): void {
  app.server.maxConnections = limits.maxConnections;
  const perAddress = limits.maxConnectionsPerAddress;
  if (perAddress >= limits.maxConnections) return;
  const held = new Map<string, number>();
  let refused = 0;
  let warnedAt = -Infinity;
  app.server.on('connection', (socket: Socket) => {
    const key = clientKey(socket.remoteAddress);
    const count = held.get(key) ?? 0;
    if (count >= perAddress) {
      // Closed before a byte is read, as Node closes those over the total: nothing is parsed or answered.
      socket.destroy();
      refused += 1;
      const now = Date.now();
      if (now - warnedAt >= REFUSAL_WARN_INTERVAL_MS) {
        app.log.warn(
          { address: key, refused, perAddress },
          'connections refused: this client address holds as many as GATEWAY_MAX_CONNECTIONS_PER_IP allows',
        );
        warnedAt = now;
        refused = 0;
      }
      return;
    }
    held.set(key, count + 1);
    socket.once('close', () => {
      const left = (held.get(key) ?? 1) - 1;
      if (left <= 0) held.delete(key);
      else held.set(key, left);
    });
  });
}

interface ParserError extends Error {
  code?: string;
  /** llhttp's own short description, e.g. "Invalid character in chunk size". */
  reason?: string;
}

/** The answer to a request Node's HTTP parser refused, by the parser's error code. */
export function clientErrorAnswer(error: ParserError): ApiError {
  let code: ErrorCode = 'BAD_REQUEST';
  let detail: string;
  switch (error.code) {
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      code = 'REQUEST_TIMEOUT';
      detail = 'the request was not received in time';
      break;
    case 'HPE_HEADER_OVERFLOW':
      code = 'HEADERS_TOO_LARGE';
      detail = `the request line and headers exceed ${Math.round(maxHeaderSize / 1024)} KiB`;
      break;
    case 'HPE_INVALID_METHOD':
      detail = 'unknown HTTP method';
      break;
    case 'HPE_UNEXPECTED_CONTENT_LENGTH':
      detail = 'Content-Length and Transfer-Encoding both given';
      break;
    case 'HPE_INVALID_CHUNK_SIZE':
    case 'HPE_STRICT':
      detail = 'malformed chunked body';
      break;
    default:
      detail = 'malformed HTTP request';
  }
  // llhttp's reasons are fixed texts about the bytes received, never about the gateway.
  if (code === 'BAD_REQUEST' && typeof error.reason === 'string' && error.reason !== '') {
    detail = `${detail} (${error.reason})`;
  }
  return new ApiError(code, { error: detail });
}

interface ServerSocket extends Socket {
  /** The response in progress on this socket, if any (Node's own field). */
  _httpMessage?: { headersSent?: boolean } | null;
}

/**
 * Answers a request Node's parser refused or timed out, in the envelope, and
 * closes the connection. Called by Fastify with the instance as `this`.
 */
function answerClientError(this: FastifyInstance, error: ParserError, socket: ServerSocket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const answer = clientErrorAnswer(error);
  this.log.debug({ code: error.code, status: answer.statusCode }, 'client error');
  // An answer already under way cannot be replaced; the connection just ends.
  if (socket.writable && socket._httpMessage?.headersSent !== true) {
    const body = JSON.stringify(errorBody(answer));
    socket.write(
      `HTTP/1.1 ${answer.statusCode} ${answer.message}\r\n` +
        'Content-Type: application/json; charset=utf-8\r\n' +
        `Content-Length: ${Buffer.byteLength(body)}\r\n` +
        'Connection: close\r\n\r\n' +
        body,
    );
  }
  socket.destroySoon();
}
