/**
 * `GET /events/ws` (DECISIONS 17; docs/events.md): the account's events over a WebSocket, each a JSON text frame
 * `{cursor, event}` (`event` the standard body), after `?after=` (else from now on), filtered like `/events/stream`.
 *
 * The token comes in `Authorization` or as the subprotocol `bearer.<token>` (http/auth.ts), which the server then
 * selects in its answer; a bad token, an unknown type or another account's device is refused in the error envelope
 * before the upgrade. Frames the client sends are ignored (at most 1 KiB each). Heartbeats are pings. The gateway
 * closes with 4000 and a reason for a consumer too slow, 1001 at shutdown (log-streams.ts).
 *
 * Owns: the route, choosing the subprotocol, and the WebSocket's side of a stream.
 * Must never: upgrade a request it has not authorised and validated.
 */
import type { IncomingMessage } from 'node:http';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { WebSocket } from 'ws';
import type {} from '@fastify/websocket';
import { BEARER_SUBPROTOCOL_PREFIX, accountOf } from '../http/auth.js';
import { errorResponses } from '../http/schemas.js';
import type { Db } from '../store/schema.js';
import { LogQuerySchema, logSelection, type LogSelection } from './log-query.js';
import { SLOW_CONSUMER_REASON, type LogStreams, type StreamSink } from './log-streams.js';

export interface EventWsRoutesOptions {
  readonly db: Db;
  readonly streams: LogStreams;
}

/** Frames a client may send (all ignored): small, so a client cannot make the gateway hold much. */
export const WS_MAX_PAYLOAD = 1024;
/** The close code of a consumer too slow (the reason says so). */
export const WS_SLOW_CLOSE = 4000;

/** ws's `handleProtocols`: the `bearer.<token>` subprotocol the client offered, if any (the only one spoken). */
export function selectBearerProtocol(protocols: Set<string>, _request: IncomingMessage): string | false {
  for (const protocol of protocols) if (protocol.startsWith(BEARER_SUBPROTOCOL_PREFIX)) return protocol;
  return false;
}

function wsSink(socket: WebSocket): StreamSink {
  let closed = false;
  return {
    kind: 'websocket',
    write(events, done) {
      events.forEach((event, i) => {
        const frame = `{"cursor":"${event.cursor}","event":${event.body}}`;
        socket.send(frame, i === events.length - 1 ? () => done() : undefined);
      });
    },
    buffered: () => socket.bufferedAmount,
    heartbeat: () => socket.ping(),
    close(reason) {
      if (closed) return;
      closed = true;
      socket.close(reason === SLOW_CONSUMER_REASON ? WS_SLOW_CLOSE : 1001, reason);
    },
    destroy: () => socket.terminate(),
    onGone: (listener) => void socket.once('close', listener),
  };
}

export const eventWsRoutes: FastifyPluginAsyncTypebox<EventWsRoutesOptions> = async (app, { db, streams }) => {
  // Worked out before the upgrade, so a refusal is an HTTP answer in the envelope.
  const selections = new WeakMap<object, LogSelection & { readonly start: string | null }>();
  app.get(
    '/events/ws',
    {
      websocket: true,
      config: { bearerSubprotocol: true },
      schema: {
        tags: ['Events'],
        summary: 'Follow the account’s events live (WebSocket)',
        description:
          'Upgrade with the token in `Authorization` or as the subprotocol `bearer.<token>` (selected in the answer). Text frames `{cursor, event}` after `after=` (else from now on), then live. Closed with 4000 and a reason when the consumer falls 256 KiB behind and takes nothing for 30 s; resume with `after=` the last cursor processed.',
        querystring: LogQuerySchema,
        response: { 101: { description: 'Switching protocols' }, ...errorResponses(400, 401, 404) },
      },
      // A refused upgrade is answered on the raw socket, which no HTTP server tracks any more: ended here, so a
      // client that keeps it open cannot hold the gateway's shutdown.
      onResponse: (request, _reply, done) => {
        if (request.headers.upgrade !== undefined) request.raw.socket.destroySoon();
        done();
      },
      preHandler: async (request) => {
        const selection = await logSelection(db, accountOf(request), request.query);
        selections.set(request, { ...selection, start: selection.after ?? (await streams.head()) });
      },
    },
    (socket, request) => {
      const selection = selections.get(request);
      if (selection === undefined) {
        socket.close(1011, 'internal error');
        return;
      }
      socket.on('message', () => undefined);
      socket.on('error', () => undefined);
      streams.follow(wsSink(socket), selection.filter, selection.start);
    },
  );
};
