// Clients of the event log's streams for tests: a Server-Sent Events reader over node:http and a WebSocket (ws),
// each collecting what arrives, able to stop reading (a consumer that stalls).
import http from 'node:http';
import WebSocket from 'ws';
import type { EventDevice } from '../../src/events/record.js';
import { eventRows, insertEvents } from '../../src/events/record.js';
import type { Db } from '../../src/store/schema.js';
import { encodeCursor, logHead } from '../../src/events/log.js';
import { waitFor } from '../helpers/wait.js';

const opened = new Set<{ destroy(): void }>();

/** Cuts every client still open (a test's afterAll, before the gateway closes). */
export function closeClients(): void {
  for (const client of opened) client.destroy();
  opened.clear();
}

export interface SseFrame {
  id?: string;
  event?: string;
  data?: string;
}

export interface SseClient {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  /** The frames with data (comments left out), in order. */
  readonly frames: SseFrame[];
  /** Comment lines seen (heartbeats). */
  readonly comments: string[];
  /** The body of a refusal (not a stream). */
  readonly body: string;
  readonly ended: boolean;
  pause(): void;
  close(): void;
}

export function openSse(url: string, headers: Record<string, string>): Promise<SseClient> {
  return new Promise((resolve, reject) => {
    const request = http.get(url, { headers, agent: false }, (response) => {
      opened.add({ destroy: () => request.destroy() });
      response.setEncoding('utf8');
      let buffer = '';
      const client = {
        status: response.statusCode ?? 0,
        headers: response.headers,
        frames: [] as SseFrame[],
        comments: [] as string[],
        body: '',
        ended: false,
        pause: () => response.pause(),
        close: () => request.destroy(),
      };
      response.on('data', (chunk: string) => {
        if (client.status !== 200) {
          client.body += chunk;
          return;
        }
        buffer += chunk;
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const frame: SseFrame = {};
          for (const line of block.split('\n')) {
            if (line.startsWith(':')) client.comments.push(line.slice(1).trim());
            else if (line.startsWith('id: ')) frame.id = line.slice(4);
            else if (line.startsWith('event: ')) frame.event = line.slice(7);
            else if (line.startsWith('data: ')) frame.data = line.slice(6);
          }
          if (frame.data !== undefined) client.frames.push(frame);
        }
      });
      const ended = () => {
        client.ended = true;
      };
      response.on('end', ended);
      response.on('close', ended);
      response.on('error', ended);
      resolve(client);
    });
    request.on('error', reject);
  });
}

export interface WsClient {
  readonly socket: WebSocket;
  readonly frames: Array<{ cursor: string; event: { id: string; type: string; data: unknown } }>;
  readonly closed: { code: number; reason: string } | null;
}

/** Opens a WebSocket; resolves once open, or rejects with the refusal's status and body. */
export function openWs(
  url: string,
  options: { protocols?: string[]; headers?: Record<string, string> },
): Promise<WsClient> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, options.protocols ?? [], { headers: options.headers ?? {} });
    opened.add({ destroy: () => socket.terminate() });
    const client: { socket: WebSocket; frames: WsClient['frames']; closed: WsClient['closed'] } = {
      socket,
      frames: [],
      closed: null,
    };
    socket.on('message', (data) => client.frames.push(JSON.parse(String(data))));
    socket.on('close', (code, reason) => {
      client.closed = { code, reason: reason.toString() };
    });
    socket.on('open', () => resolve(client));
    socket.on('unexpected-response', (request, response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => {
        request.destroy();
        reject(Object.assign(new Error('refused'), { status: response.statusCode, body }));
      });
    });
    socket.on('error', (error) => {
      if (!(error.message ?? '').includes('Unexpected server response')) reject(error);
    });
  });
}

/** Records `n` events for the device in one transaction (one multi-row insert), as the dispatcher's batches do. */
export async function recordMany(
  db: Db,
  device: EventDevice,
  n: number,
  data: (i: number) => unknown,
): Promise<string[]> {
  const events = await db.transaction().execute(async (trx) => {
    const made = [];
    for (let i = 0; i < n; i++) made.push(await eventRows(trx, device, 'message.sent', data(i), Date.now()));
    await insertEvents(trx, made);
    return made;
  });
  return events.map((event) => event.log.id);
}

/**
 * The log's head once a reader can see every row stored so far. On PostgreSQL a read right after a commit can be
 * held a moment behind another open transaction of the same database (src/events/log.ts): a
 * test that reads at once waits for this first, as a live reader would be woken again.
 */
export async function settledHead(db: Db): Promise<string | null> {
  const seen = await waitFor(
    async () => {
      const last = await db
        .selectFrom('events')
        .select(['xact', 'seq'])
        .orderBy('xact', 'desc')
        .orderBy('seq', 'desc')
        .limit(1)
        .executeTakeFirst();
      const head = await logHead(db);
      return { head, last: last === undefined ? null : encodeCursor(Number(last.xact), Number(last.seq)) };
    },
    (v) => v.head === v.last,
    { what: 'the log to be readable to its end', timeoutMs: 15_000 },
  );
  return seen.head;
}
