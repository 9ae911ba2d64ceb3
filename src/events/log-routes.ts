/**
 * HTTP routes of the event log (DECISIONS 17; docs/events.md): `GET /events` pages through the account's events,
 * `GET /events/stream` follows them as Server-Sent Events. (The WebSocket is log-ws.ts.)
 *
 * Owns: paths, schemas, status codes, and the SSE wire format: `id:` the cursor, `event:` the type, `data:` the
 * standard body; a `:` comment as heartbeat; a last `event: close` with `{"reason"}` when the gateway ends the
 * stream (a slow consumer, shutdown).
 * Must never: answer another account's events, or hold more for a consumer than log-streams.ts allows.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { ServerResponse } from 'node:http';
import { accountOf } from '../http/auth.js';
import { CodeEnvelope, Nullable, errorResponses } from '../http/schemas.js';
import type { Db } from '../store/schema.js';
import { readLog, type LoggedEvent } from './log.js';
import { LogQuerySchema, logSelection } from './log-query.js';
import type { LogStreams, StreamSink } from './log-streams.js';
import { EVENT_TYPES, type StoredEvent } from './types.js';

export interface EventLogRoutesOptions {
  readonly db: Db;
  readonly streams: LogStreams;
}

export const MAX_EVENTS_PAGE = 500;

const CURSOR = Type.String({
  pattern: '^[0-9a-f]{32}$',
  description: 'A cursor the gateway gave out (an event’s `cursor`, or `next_cursor`)',
});

const LoggedEventSchema = Type.Object(
  {
    cursor: CURSOR,
    id: Type.String({ description: 'The event id (`evt_…`), as in webhooks' }),
    type: Type.String({ enum: [...EVENT_TYPES] }),
    device: Type.Object({ id: Type.Integer(), phone: Nullable(Type.String()) }),
    created_at: Type.String({ format: 'date-time' }),
    data: Type.Unknown({ description: 'As in the webhook body of the type' }),
  },
  { title: 'LoggedEvent' },
);

const tags = ['Events'];

/** One SSE frame per event. */
function sseFrame(event: LoggedEvent): string {
  return `id: ${event.cursor}\nevent: ${event.type}\ndata: ${event.body}\n\n`;
}

/** An SSE response as a stream sink. */
function sseSink(raw: ServerResponse): StreamSink {
  let closed = false;
  return {
    kind: 'sse',
    write(events, done) {
      raw.write(events.map(sseFrame).join(''), () => done());
    },
    buffered: () => raw.writableLength,
    heartbeat: () => void raw.write(': heartbeat\n\n'),
    close(reason) {
      if (closed) return;
      closed = true;
      raw.end(`event: close\ndata: ${JSON.stringify({ reason })}\n\n`);
    },
    destroy: () => void raw.destroy(),
    onGone: (listener) => void raw.once('close', listener),
  };
}

export const eventLogRoutes: FastifyPluginAsyncTypebox<EventLogRoutesOptions> = async (app, { db, streams }) => {
  app.get(
    '/events',
    {
      schema: {
        tags,
        summary: 'The account’s stored events, oldest first, after a cursor',
        description: `Each item is the standard webhook body plus its \`cursor\`. \`next_cursor\` is set when more events follow the page: ask again with \`after=next_cursor\`. Events are kept GATEWAY_EVENT_RETENTION_DAYS (default 7).`,
        querystring: Type.Composite([
          LogQuerySchema,
          Type.Object({ limit: Type.Integer({ minimum: 1, maximum: MAX_EVENTS_PAGE, default: 100 }) }),
        ]),
        response: {
          200: CodeEnvelope(Type.Array(LoggedEventSchema), { next_cursor: Nullable(CURSOR) }),
          ...errorResponses(400, 401, 404),
        },
      },
    },
    async (request) => {
      const { limit } = request.query;
      const { filter, after } = await logSelection(db, accountOf(request), request.query);
      const events = await readLog(db, after, filter, limit + 1);
      const page = events.slice(0, limit);
      const data = page.map((event) => ({ cursor: event.cursor, ...(JSON.parse(event.body) as StoredEvent) }));
      const next = events.length > limit ? (page.at(-1)?.cursor ?? null) : null;
      return { code: 200, status: 200, message: 'OK', data, next_cursor: next };
    },
  );

  app.get(
    '/events/stream',
    {
      schema: {
        tags,
        summary: 'Follow the account’s events live (Server-Sent Events)',
        description:
          'Starts after `Last-Event-ID` (or `after=`; neither: from now on), then follows live. Each event: `id:` its cursor, `event:` its type, `data:` the standard body. A `:` comment every 15 s. A consumer that stops reading while 256 KiB wait for it is sent `event: close` and closed; it resumes by its cursor with nothing lost.',
        querystring: LogQuerySchema,
        headers: Type.Object({ 'last-event-id': Type.Optional(Type.String({ maxLength: 64 })) }),
        response: {
          200: { description: 'A `text/event-stream`', content: { 'text/event-stream': { schema: Type.String() } } },
          ...errorResponses(400, 401, 404),
        },
      },
    },
    async (request, reply) => {
      const lastEventId = request.headers['last-event-id'];
      const selection = await logSelection(db, accountOf(request), request.query, lastEventId);
      const after = selection.after ?? (await streams.head());
      reply.hijack();
      const raw = reply.raw;
      raw.writeHead(200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache, no-transform',
        'x-accel-buffering': 'no',
        'x-request-id': request.id,
      });
      // Headers and a first comment at once: the consumer knows it is following.
      raw.write(': following\n\n');
      streams.follow(sseSink(raw), selection.filter, after);
    },
  );
};
