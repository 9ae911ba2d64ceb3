/**
 * Requests that need a device's live connection (QR, pairing code, logout,
 * restart, deletion, group and contact operations) run on the node holding
 * the device: any other node passes the request on over HTTP and answers with
 * the holder's answer, byte for byte (docs/internals.md, Clusters). Forwarding over HTTP
 * rather than through the database: the answer is synchronous (a QR waits for
 * the network), needs no polling table, and the holder runs exactly the code
 * a direct request would, so the caller cannot tell the difference.
 *
 * The forwarded request carries the caller's own Authorization header and is
 * authenticated again by the holder like any request; the hop header only
 * stops a request from being forwarded twice (a node receiving a forwarded
 * request for a device it does not hold answers 503 instead of passing it on).
 *
 * Owns: the preHandler that routes such requests, the HTTP hop, its bounds.
 * Must never: hang (every wait is bounded; a holder that does not answer in
 * time is 503 `Device unavailable, retry shortly` with Retry-After), forward a
 * request twice, or decide anything about the device itself.
 */
import type { FastifyBaseLogger, FastifyInstance, FastifyRequest } from 'fastify';
import { Agent, request as httpRequest } from 'undici';
import { deviceUnavailable, sendError } from '../http/error-handler.js';
import type { ClusterNode } from './node.js';

/** Marks a request another node passed on; its value is the forwarding node's name. */
export const HOP_HEADER = 'x-gateway-forwarded-by';

/** Finds the device a request acts on (undefined: none known; the request runs here and answers itself). */
export type HolderLookup = (request: FastifyRequest) => Promise<number | undefined>;

export interface HolderRoute {
  readonly find: HolderLookup;
  /** Also served without the connection (deleting a device): with no live holder it runs where it arrived. */
  readonly anywhere?: boolean;
}

export interface ForwardOptions {
  readonly node: ClusterNode;
  /** By `METHOD /path` as registered, without the `/api` prefix. */
  readonly lookups: ReadonlyMap<string, HolderRoute>;
  readonly logger: FastifyBaseLogger;
  /** Connecting to the holder. */
  readonly connectTimeoutMs?: number;
  /** The holder's whole answer (a QR request waits for the network up to 10 s there). */
  readonly answerTimeoutMs?: number;
}

/** Headers of the holder's answer passed back to the caller. */
const ANSWER_HEADERS = ['content-type', 'retry-after', 'allow'];

export function installForwarding(app: FastifyInstance, options: ForwardOptions): void {
  const connectTimeoutMs = options.connectTimeoutMs ?? 2_000;
  const answerTimeoutMs = options.answerTimeoutMs ?? 20_000;
  const agent = new Agent({
    connect: { timeout: connectTimeoutMs },
    headersTimeout: answerTimeoutMs,
    bodyTimeout: answerTimeoutMs,
    keepAliveTimeout: 4_000,
  });
  app.addHook('onClose', async () => agent.close());

  app.addHook('preHandler', async (request, reply) => {
    const pattern = request.routeOptions.url;
    if (pattern === undefined) return;
    const holder = options.lookups.get(`${request.method} ${pattern.replace(/^\/api(?=\/)/, '')}`);
    if (holder === undefined) return;
    const deviceId = await holder.find(request);
    if (deviceId === undefined) return;
    const hop = request.headers[HOP_HEADER] !== undefined;
    const route = await options.node.route(deviceId, hop, holder.anywhere === true);
    if (route.kind === 'here') return;
    if (route.kind === 'unavailable') return sendError(reply, deviceUnavailable());

    const headers: Record<string, string> = { [HOP_HEADER]: options.node.node, 'x-request-id': request.id };
    const authorization = request.headers.authorization;
    if (authorization !== undefined) headers.authorization = authorization;
    let body: string | undefined;
    if (request.body !== undefined && request.body !== null) {
      // The body as validated here (forms already read into fields): the holder validates it again.
      body = JSON.stringify(request.body);
      headers['content-type'] = 'application/json';
    }
    const abort = AbortSignal.timeout(answerTimeoutMs + connectTimeoutMs);
    try {
      const answer = await httpRequest(`${route.url}${request.url}`, {
        method: request.method as 'GET',
        headers,
        body,
        dispatcher: agent,
        signal: abort,
      });
      const bytes = Buffer.from(await answer.body.arrayBuffer());
      for (const name of ANSWER_HEADERS) {
        const value = answer.headers[name];
        if (typeof value === 'string') reply.header(name, value);
      }
      return reply.code(answer.statusCode).send(bytes);
    } catch (error) {
      request.log.warn(
        { err: error, deviceId, holder: route.node },
        'the node holding the device did not answer; answered 503',
      );
      return sendError(reply, deviceUnavailable());
    }
  });
}
