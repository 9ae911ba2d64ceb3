/**
 * Wake-ups between nodes over PostgreSQL's LISTEN/NOTIFY: "devices were
 * handed back" (l), "device N changed" (d:N), "messages wait for devices
 * 1,2,3" (w:1,2,3). A notification sent inside a transaction is delivered
 * only if, and once, it commits, so the accepting transaction itself
 * announces its messages.
 *
 * Owns: the channel name (one per schema, so gateways sharing a database in
 * different schemas do not wake each other), one listening connection kept
 * open with reconnects, and the statement that notifies.
 * Must never: be needed for correctness: a lost notification costs latency
 * only, since every node also looks on its heartbeat, and after a reconnect.
 */
import pg from 'pg';
import { sql } from 'kysely';
import type { FastifyBaseLogger } from 'fastify';
import type { Db } from '../store/schema.js';
import { doubling, jitter } from '../backoff.js';

const MAX_PAYLOAD = 7_900;
const RECONNECT_MIN_MS = 500;
const RECONNECT_MAX_MS = 10_000;
const CONNECT_TIMEOUT_MS = 3_000;

/** The channel of the schema the store works in. */
export async function channelOf(db: Db): Promise<string> {
  const { rows } = await sql<{ schema: string }>`select current_schema() as schema`.execute(db);
  return `gateway:${rows[0]?.schema ?? 'public'}`.slice(0, 63);
}

/** Notifies inside `db` (a transaction: delivered once it commits). */
export async function notify(db: Db, channel: string, message: string): Promise<void> {
  await sql`select pg_notify(${channel}, ${message})`.execute(db);
}

/** `w:` messages for these devices, each within PostgreSQL's payload limit. */
export function workMessages(deviceIds: readonly number[]): string[] {
  const out: string[] = [];
  let current = 'w:';
  for (const id of deviceIds) {
    const part = current === 'w:' ? String(id) : `,${id}`;
    if (current.length + part.length > MAX_PAYLOAD) {
      out.push(current);
      current = `w:${id}`;
    } else current += part;
  }
  if (current !== 'w:') out.push(current);
  return out;
}

/** Parses a `w:` message; anything malformed is no device. */
export function parseWork(message: string): number[] {
  if (!message.startsWith('w:')) return [];
  return message
    .slice(2)
    .split(',')
    .map(Number)
    .filter((id) => Number.isSafeInteger(id) && id > 0);
}

export interface ListenerOptions {
  readonly databaseUrl: string;
  readonly channel: string;
  readonly logger: FastifyBaseLogger;
  readonly onMessage: (message: string) => void;
  /** After every (re)connect: what was notified meanwhile is lost; look for it. */
  readonly onConnected: () => void;
}

export class SignalListener {
  private client: pg.Client | null = null;
  private timer: NodeJS.Timeout | null = null;
  private failures = 0;
  private closed = false;
  private markConnected: () => void = () => undefined;
  /** Resolves after the first connect, once `onConnected` has run. */
  readonly connected: Promise<void> = new Promise((resolve) => (this.markConnected = resolve));

  constructor(private readonly options: ListenerOptions) {}

  start(): void {
    void this.connect();
  }

  private async connect(): Promise<void> {
    if (this.closed) return;
    const client = new pg.Client({
      connectionString: this.options.databaseUrl,
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      keepAlive: true,
    });
    this.client = client;
    let lost = false;
    const onLost = (error?: Error) => {
      if (lost) return;
      lost = true;
      if (this.client === client) this.client = null;
      client.end().catch(() => undefined);
      if (this.closed) return;
      if (this.failures === 0)
        this.options.logger.warn({ err: error }, 'cluster listener lost its connection; reconnecting');
      this.retry();
    };
    client.on('error', onLost);
    client.on('end', () => onLost());
    client.on('notification', (msg) => {
      if (msg.channel === this.options.channel && msg.payload !== undefined) this.options.onMessage(msg.payload);
    });
    try {
      await client.connect();
      await client.query(`listen "${this.options.channel.replaceAll('"', '""')}"`);
    } catch (error) {
      onLost(error as Error);
      return;
    }
    if (this.closed) {
      await client.end().catch(() => undefined);
      return;
    }
    if (this.failures > 0) this.options.logger.info('cluster listener connected again');
    this.failures = 0;
    this.options.onConnected();
    this.markConnected();
  }

  private retry(): void {
    this.failures += 1;
    this.timer = setTimeout(
      () => {
        this.timer = null;
        void this.connect();
      },
      jitter(doubling(RECONNECT_MIN_MS, RECONNECT_MAX_MS, this.failures)),
    );
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    const client = this.client;
    this.client = null;
    await client?.end().catch(() => undefined);
  }
}
