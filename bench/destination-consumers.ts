// The consumers of `bench/destinations.ts`: one per event destination, each noting the arrival time of every
// event it receives (by id, so repeats are counted) the way a user's own consumer would read it: a webhook
// receiver (node:http), an SSE reader of `GET /events/stream` (fetch), a WebSocket reader of `GET /events/ws`
// (`ws`), a RabbitMQ queue bound to the gateway's exchange (amqplib) and a JetStream ordered consumer
// (@nats-io/jetstream), as docs/events.md and docs/brokers.md describe them.
//
// Owns: the benchmark's own exchange, queue and stream (created here, deleted by `close`).
// Must never: touch another exchange or stream of the shared brokers.
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect as natsConnect } from '@nats-io/transport-node';
import { connect as amqpConnect } from 'amqplib';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Worker } from 'node:worker_threads';
import WebSocket from 'ws';
import { TOKEN } from './lib.js';

export interface Arrival {
  readonly at: number;
  readonly created: number;
}

/** What one destination received: message events by id (how often each), their arrivals, and other types. */
export class Tally {
  readonly seen = new Map<string, number>();
  readonly arrivals: Arrival[] = [];
  others = 0;
  firstCursor: string | null = null;

  constructor(readonly name: string) {}

  note(event: { id: string; type: string; created_at: string }, cursor?: string, at = Date.now()): void {
    if (!event.type.startsWith('message.')) {
      this.others++;
      return;
    }
    if (cursor !== undefined) this.firstCursor ??= cursor;
    this.seen.set(event.id, (this.seen.get(event.id) ?? 0) + 1);
    this.arrivals.push({ at, created: Date.parse(event.created_at) });
  }
}

export interface Consumer {
  readonly tally: Tally;
  close(): Promise<void>;
}

type EventBody = { id: string; type: string; created_at: string };

/**
 * A node:http receiver answering 200 at once; the webhook URL to set on the devices. `thread`: on a thread of its own
 * (bench/webhook-receiver-thread.mjs), its arrivals noted with the times it saw them.
 */
export async function webhookReceiver(thread = false): Promise<Consumer & { url: string }> {
  if (thread) return threadReceiver();
  const tally = new Tally('webhook');
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      tally.note(JSON.parse(Buffer.concat(chunks).toString('utf8')) as EventBody);
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    tally,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

async function threadReceiver(): Promise<Consumer & { url: string }> {
  const tally = new Tally('webhook');
  const worker = new Worker(new URL('./webhook-receiver-thread.mjs', import.meta.url));
  let closed: (() => void) | null = null;
  const port = await new Promise<number>((resolve, reject) => {
    worker.once('error', reject);
    worker.on('message', (message: { port?: number; events?: Array<EventBody & { at: number }>; closed?: true }) => {
      if (message.port !== undefined) resolve(message.port);
      for (const event of message.events ?? []) tally.note(event, undefined, event.at);
      if (message.closed === true) closed?.();
    });
  });
  return {
    tally,
    url: `http://127.0.0.1:${port}/hooks`,
    close: async () => {
      await new Promise<void>((resolve) => {
        closed = resolve;
        worker.postMessage({ close: true });
      });
      await worker.terminate();
    },
  };
}

/** Reads `GET /events/stream` (from now on, or after `after`) until closed. */
export async function sseConsumer(base: string, name = 'sse', after?: string): Promise<Consumer> {
  const tally = new Tally(name);
  const abort = new AbortController();
  const query = after === undefined ? '' : `?after=${after}`;
  const res = await fetch(`${base}/events/stream${query}`, {
    headers: { authorization: `Bearer ${TOKEN}` },
    signal: abort.signal,
  });
  if (res.status !== 200 || res.body === null) throw new Error(`GET /events/stream: ${res.status}`);
  const reading = (async () => {
    let buffer = '';
    const decoder = new TextDecoder();
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true });
        const frames = buffer.split('\n\n');
        buffer = frames.pop() ?? '';
        for (const frame of frames) {
          let id: string | undefined;
          let data: string | undefined;
          for (const line of frame.split('\n')) {
            if (line.startsWith('id: ')) id = line.slice(4);
            else if (line.startsWith('data: ')) data = line.slice(6);
          }
          if (id !== undefined && data !== undefined) tally.note(JSON.parse(data) as EventBody, id);
        }
      }
    } catch (error) {
      if (!abort.signal.aborted) throw error;
    }
  })();
  return {
    tally,
    close: async () => {
      abort.abort();
      await reading;
    },
  };
}

/** Reads `GET /events/ws` (from now on, or after `after`) until closed. */
export async function wsConsumer(base: string, name = 'websocket', after?: string): Promise<Consumer> {
  const tally = new Tally(name);
  const query = after === undefined ? '' : `?after=${after}`;
  const ws = new WebSocket(`${base.replace(/^http/, 'ws')}/events/ws${query}`, {
    headers: { authorization: `Bearer ${TOKEN}` },
  });
  ws.on('message', (text: Buffer) => {
    const frame = JSON.parse(text.toString('utf8')) as { cursor: string; event: EventBody };
    tally.note(frame.event, frame.cursor);
  });
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  return {
    tally,
    close: async () => {
      if (ws.readyState === WebSocket.CLOSED) return;
      const closed = new Promise<void>((resolve) => ws.once('close', () => resolve()));
      ws.close();
      await closed;
    },
  };
}

/** Declares the benchmark's exchange (as the gateway declares it) and an exclusive queue bound to every key. */
export async function amqpConsumer(url: string, exchange: string): Promise<Consumer> {
  const tally = new Tally('rabbitmq');
  const connection = await amqpConnect(url);
  const channel = await connection.createChannel();
  await channel.assertExchange(exchange, 'topic', { durable: true });
  const { queue } = await channel.assertQueue('', { exclusive: true, autoDelete: true });
  await channel.bindQueue(queue, exchange, '#');
  await channel.prefetch(1000);
  await channel.consume(
    queue,
    (msg) => {
      if (msg === null) return;
      tally.note(JSON.parse(msg.content.toString('utf8')) as EventBody);
    },
    { noAck: true },
  );
  return {
    tally,
    close: async () => {
      await channel.deleteQueue(queue).catch(() => undefined);
      await channel.deleteExchange(exchange).catch(() => undefined);
      await connection.close();
    },
  };
}

/** Creates the benchmark's stream (subjects `<prefix>.>`, as the gateway would) and reads it with an ordered consumer. */
export async function natsConsumer(url: string, stream: string, prefix: string): Promise<Consumer> {
  const tally = new Tally('nats');
  const nc = await natsConnect({ servers: url });
  const jsm = await jetstreamManager(nc);
  await jsm.streams.add({ name: stream, subjects: [`${prefix}.>`] });
  const consumer = await jetstream(nc).consumers.get(stream);
  const messages = await consumer.consume();
  const reading = (async () => {
    for await (const msg of messages) tally.note(msg.json<EventBody>());
  })();
  return {
    tally,
    close: async () => {
      await messages.close();
      await reading.catch(() => undefined);
      await jsm.streams.delete(stream).catch(() => undefined);
      await nc.close();
    },
  };
}
