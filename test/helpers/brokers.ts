// Real brokers for tests (docs/testing.md): the machine's RabbitMQ (127.0.0.1:5672, guest/guest) and NATS with
// JetStream (127.0.0.1:4222), each test under names of its own (an exchange, a stream, a subject prefix); a TCP
// proxy the test cuts and restores; a `nats-server -js` of the test's own on a free port, stopped and started.
// A broker that cannot be reached FAILS the test with that reason: it never passes silently.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as amqpConnect, type ChannelModel, type ConsumeMessage } from 'amqplib';
import { connect as natsConnect, type NatsConnection } from '@nats-io/transport-node';
import { jetstream, jetstreamManager, type JsMsg } from '@nats-io/jetstream';
import { portForOwnServer } from './ports.js';
import { waitFor } from './wait.js';

export const AMQP_URL = process.env.TEST_AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672';
export const NATS_URL = process.env.TEST_NATS_URL ?? 'nats://127.0.0.1:4222';

/** A name no other test uses (letters, digits and `_`, valid as an exchange, a stream and a subject word). */
export function uniqueName(prefix: string): string {
  return `${prefix}_${randomBytes(5).toString('hex')}`;
}

/** Throws, naming the broker and how to start it, when RabbitMQ does not answer. */
export async function requireRabbit(url = AMQP_URL): Promise<void> {
  try {
    const model = await amqpConnect(url, { timeout: 5_000 });
    await model.close();
  } catch (error) {
    throw new Error(
      `RabbitMQ is not reachable at ${url.replace(/\/\/[^@]*@/, '//')} (.ci/run starts it): ${(error as Error).message}`,
    );
  }
}

export async function requireNats(url = NATS_URL): Promise<void> {
  let nc: NatsConnection | null = null;
  try {
    nc = await natsConnect({ servers: url, reconnect: false, timeout: 5_000 });
    await (await jetstreamManager(nc)).getAccountInfo();
  } catch (error) {
    throw new Error(`NATS with JetStream is not reachable at ${url} (.ci/run starts it): ${(error as Error).message}`);
  } finally {
    await nc?.close();
  }
}

/** What a RabbitMQ consumer received: a queue of its own bound to the exchange with `#`. */
export interface AmqpInbox {
  readonly exchange: string;
  readonly messages: ConsumeMessage[];
  close(): Promise<void>;
}

export async function amqpInbox(exchange: string, url = AMQP_URL): Promise<AmqpInbox> {
  const model: ChannelModel = await amqpConnect(url);
  const channel = await model.createChannel();
  await channel.assertExchange(exchange, 'topic', { durable: true });
  const { queue } = await channel.assertQueue('', { exclusive: true, autoDelete: true });
  await channel.bindQueue(queue, exchange, '#');
  const messages: ConsumeMessage[] = [];
  await channel.consume(
    queue,
    (message) => {
      if (message !== null) messages.push(message);
    },
    { noAck: true },
  );
  return {
    exchange,
    messages,
    async close() {
      // The exchange is the test's own: removed with it.
      await channel.deleteExchange(exchange).catch(() => undefined);
      await model.close().catch(() => undefined);
    },
  };
}

/** Every message of a stream, oldest first (an ordered consumer). */
export async function streamMessages(stream: string, count: number, url = NATS_URL): Promise<JsMsg[]> {
  const nc = await natsConnect({ servers: url, reconnect: false });
  try {
    const consumer = await jetstream(nc).consumers.get(stream);
    const got: JsMsg[] = [];
    await waitFor(
      async () => {
        const batch = await consumer.fetch({ max_messages: 1000, expires: 1_000 });
        for await (const message of batch) got.push(message);
        return got.length;
      },
      (n) => n >= count,
      { timeoutMs: 30_000, what: `${count} messages in stream ${stream}` },
    );
    return got;
  } finally {
    await nc.close();
  }
}

export async function deleteStream(stream: string, url = NATS_URL): Promise<void> {
  const nc = await natsConnect({ servers: url, reconnect: false }).catch(() => null);
  if (nc === null) return;
  await (await jetstreamManager(nc)).streams.delete(stream).catch(() => undefined);
  await nc.close();
}

/** A TCP proxy to `target`: `cut()` drops every connection and refuses new ones until `restore()`. */
export interface Proxy {
  readonly port: number;
  cut(): void;
  restore(): void;
  close(): Promise<void>;
}

export async function tcpProxy(targetHost: string, targetPort: number): Promise<Proxy> {
  const sockets = new Set<Socket>();
  let open = true;
  const server: Server = createServer((client) => {
    if (!open) {
      client.destroy();
      return;
    }
    const upstream = createConnection({ host: targetHost, port: targetPort });
    sockets.add(client).add(upstream);
    const drop = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  const cut = () => {
    open = false;
    for (const socket of sockets) socket.destroy();
    sockets.clear();
  };
  return {
    port,
    cut,
    restore() {
      open = true;
    },
    async close() {
      cut();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A `nats-server -js` of the test's own on a port of its own (ports.ts), its store in a temp dir kept across stop and start. */
export interface OwnNats {
  readonly url: string;
  start(): Promise<void>;
  stop(): Promise<void>;
  destroy(): Promise<void>;
}

export async function ownNats(): Promise<OwnNats> {
  const port = await portForOwnServer();
  const dir = await mkdtemp(join(tmpdir(), 'gw-nats-'));
  const url = `nats://127.0.0.1:${port}`;
  let child: ChildProcess | null = null;
  const stop = async () => {
    const running = child;
    child = null;
    if (running === null || running.exitCode !== null) return;
    await new Promise<void>((resolve) => {
      running.once('exit', () => resolve());
      running.kill('SIGTERM');
    });
  };
  return {
    url,
    async start() {
      if (child !== null) return;
      const spawned = spawn('nats-server', ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', dir], {
        stdio: 'ignore',
      });
      child = spawned;
      const failed = new Promise<never>((_, reject) => {
        spawned.once('error', (error) => reject(new Error(`nats-server could not start: ${error.message}`)));
      });
      failed.catch(() => undefined);
      await Promise.race([
        failed,
        waitFor(
          () =>
            requireNats(url).then(
              () => true,
              () => false,
            ),
          (ok) => ok,
          { timeoutMs: 15_000, intervalMs: 100, what: `nats-server on port ${port}` },
        ),
      ]);
    },
    stop,
    async destroy() {
      await stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
