// Benchmark: events per second end to end to each event destination at once, and the latency from each event's
// `created_at` (the status change that recorded it) to its arrival at the consumer (issue 28).
//
// Method: the gateway runs as its own process (`dist/main.js`; SQLite, or with BENCH_STORE=postgres a fresh
// database on the machine's PostgreSQL, dropped at the end; in-process sandbox, GATEWAY_SEND_INTERVAL_MS=0) with
// both brokers configured: RabbitMQ (BENCH_AMQP_URL, default amqp://guest:guest@127.0.0.1:5672) on an exchange of
// this run's own, NATS JetStream (BENCH_NATS_URL, default nats://127.0.0.1:4222) on a stream and subject prefix of
// this run's own; both are deleted at the end. Five consumers in this process (`bench/destination-consumers.ts`)
// take every event: the webhook receiver (the devices' webhook_url; the reference), an SSE reader of
// `/events/stream`, a WebSocket reader of `/events/ws`, a queue bound to the exchange, an ordered JetStream
// consumer. Load is real traffic as in `bench/webhooks.ts`: chat messages POSTed at a fixed rate (autocannon,
// spread over the devices and 500 recipient phones that read what they get), each yielding `message.sent`,
// `message.delivered` and `message.read`. Only `message.*` events are counted (the brokers also get the pairing
// events of the log). Counted in the measuring window (after a warm-up): arrivals per second per destination, the
// latency p50/p99/max of the events created in it; then every consumer is waited for until it has all N events
// (N: the webhook deliveries the gateway recorded), and its drain rate is N over its first to last arrival.
// Then a fresh SSE and a fresh WebSocket consumer replay the whole log from its start (the stream's own rate
// when it does not wait for new events). Last, the gateway is restarted with the brokers' cursors forgotten and
// fresh exchange and stream names: it publishes the whole log as to a broker configured the first time, and
// each broker's rate is N over its consumer's first to last arrival (the publisher's own rate from the log).
//
//   npm run build && node --import tsx bench/destinations.ts [seconds] [messages_per_second] [devices]
//
// BENCH_WEBHOOK_RECEIVER=thread puts the webhook receiver on a thread of its own; `benchmark_loop_delay_ms` says how
// long this process's own callbacks waited, which the receiver's answers wait for too when it shares the thread.
//
// BENCH_ANALYZE=1 (PostgreSQL): the benchmark's database is analyzed after the warm-up, as autovacuum does within
// its first minute on a new store. Without it, a run shorter than that measures the plans PostgreSQL made for
// empty tables (bench/README.md, Plans made for empty tables).
import autocannon from 'autocannon';
import Database from 'better-sqlite3';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import pg from 'pg';
import { cpus } from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { api, chatRotation, cpuMs, machine, messagesRequest, pairHookedDevices } from './lib.js';
import { loadAverage, onFailure, openBenchStore, startNodes, storeKind } from './stores.js';
import { benchActivity } from './pg-activity.js';
import {
  amqpConsumer,
  natsConsumer,
  sseConsumer,
  webhookReceiver,
  wsConsumer,
  type Consumer,
  type Tally,
} from './destination-consumers.js';

const seconds = Number(process.argv[2] ?? 10);
const messageRate = Number(process.argv[3] ?? 1150);
const deviceCount = Number(process.argv[4] ?? 20);
const recipients = Array.from({ length: 500 }, (_, i) => `6286${String(10_000_000 + i * 10 + 7)}`);
const warmupSeconds = 3;
// The load generator's connections (BENCH_CONNECTIONS): with 32, a store whose acceptance takes 50 ms answers at most
// 640 requests a second, whatever is offered.
const connections = Number(process.env.BENCH_CONNECTIONS ?? 32);
const amqpUrl = process.env.BENCH_AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672';
const natsUrl = process.env.BENCH_NATS_URL ?? 'nats://127.0.0.1:4222';
const suffix = randomBytes(4).toString('hex');
const exchange = `bench.destinations.${suffix}`;
const stream = `BENCH_DESTINATIONS_${suffix.toUpperCase()}`;
const subjectPrefix = `bench.destinations.${suffix}`;

const loadAtStart = loadAverage();
const kind = storeKind();
const store = await openBenchStore(kind);
const consumers: Consumer[] = [];
const closeAll = async () => {
  for (const consumer of consumers.splice(0)) await consumer.close().catch(() => undefined);
};
// A failure midway still deletes this run's exchange and stream (and, through the store, drops its database).
onFailure(closeAll);

// BENCH_WEBHOOK_RECEIVER=thread: the receiver on a thread of its own (bench/webhook-receiver-thread.mjs says why).
const receiverOnThread = process.env.BENCH_WEBHOOK_RECEIVER === 'thread';
const webhook = await webhookReceiver(receiverOnThread);
consumers.push(webhook);
// The brokers' consumers exist before the gateway publishes (the exchange would drop what no queue takes).
consumers.push(await amqpConsumer(amqpUrl, exchange));
consumers.push(await natsConsumer(natsUrl, stream, subjectPrefix));

store.cli('migrate', '--create');
const nodes = await startNodes(
  store,
  1,
  {
    GATEWAY_SEND_INTERVAL_MS: '0',
    GATEWAY_ALLOW_PRIVATE_URLS: 'true',
    LOG_LEVEL: 'info',
    GATEWAY_AMQP_URL: amqpUrl,
    GATEWAY_AMQP_EXCHANGE: exchange,
    GATEWAY_NATS_URL: natsUrl,
    GATEWAY_NATS_STREAM: stream,
    GATEWAY_NATS_SUBJECT_PREFIX: subjectPrefix,
  },
  null,
);
const gateway = { url: nodes.urls[0]!, pid: nodes.processes[0]!.child.pid! };
store.cli('accounts', 'set-limit', 'default', String(deviceCount));

const { phones, ids: deviceIds } = await pairHookedDevices(gateway.url, deviceCount, 50_000_000, webhook.url);
for (const phone of recipients) await api(gateway.url, 'POST', '/sandbox/phones', { phone, auto_read: true });

const sse = await sseConsumer(gateway.url);
const ws = await wsConsumer(gateway.url);
consumers.push(sse, ws);
const live: Tally[] = consumers.map((consumer) => consumer.tally);

// --- load ------------------------------------------------------------------------------

const chats = chatRotation(phones, recipients, 'destinations bench');
const load = async (duration: number) => {
  const answer = await autocannon({
    url: gateway.url,
    connections,
    duration,
    overallRate: messageRate,
    requests: [
      // One count over every load run (chatRotation's).
      messagesRequest(chats),
    ],
  });
  return { ok: answer['2xx'], non2xx: answer.non2xx };
};

const warm = await load(warmupSeconds);
await store.analyzeIfAsked();
const gatewayCpuStart = cpuMs(gateway.pid);
const selfCpuStart = process.cpuUsage();
const activity = await benchActivity(store.env.DATABASE_URL);
// How long this process's own event loop kept callbacks waiting (the load generator and the consumers share it).
const loopDelay = monitorEventLoopDelay({ resolution: 10 });
loopDelay.enable();
const windowStart = Date.now();
const measured = await load(seconds);
const windowEnd = Date.now();
loopDelay.disable();
const gatewayCpu = cpuMs(gateway.pid) - gatewayCpuStart;
const selfCpu = process.cpuUsage(selfCpuStart);
const pgActivity = await activity?.stop();

/** Every event the gateway recorded for the webhooks (all message events: the webhook URLs were set before). */
async function recorded(): Promise<number> {
  let total = -webhook.tally.others; // counted by type, as the consumers count
  for (const id of deviceIds) {
    total += (await api(gateway.url, 'GET', `/devices/${id}/webhook-deliveries?per_page=1`)).meta.total as number;
  }
  return total;
}
// Drained: every consumer has every recorded event, and no more are being recorded (receipts come after sends).
const drainStart = Date.now();
let expected = await recorded();
while (Date.now() - drainStart < 180_000) {
  if (live.every((tally) => tally.seen.size >= expected)) {
    await new Promise((resolve) => setTimeout(resolve, 500));
    const again = await recorded();
    if (again === expected && live.every((tally) => tally.seen.size >= expected)) break;
    expected = again;
  }
  await new Promise((resolve) => setTimeout(resolve, 50));
}
const drainedAfterMs = Date.now() - windowEnd;

// --- replay: the streams' own rate, reading the whole log from its start ---------------------

async function replay(open: () => Promise<Consumer>): Promise<Record<string, unknown>> {
  const started = Date.now();
  const consumer = await open();
  while (consumer.tally.seen.size < expected && Date.now() - started < 120_000) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const ms = (consumer.tally.arrivals.at(-1)?.at ?? Date.now()) - started;
  await consumer.close();
  return {
    events: consumer.tally.seen.size,
    all: consumer.tally.seen.size >= expected,
    ms,
    events_per_second: Math.round(consumer.tally.seen.size / (ms / 1000)),
  };
}
const origin = '0'.repeat(32);
const replays = {
  sse: await replay(() => sseConsumer(gateway.url, 'sse replay', origin)),
  websocket: await replay(() => wsConsumer(gateway.url, 'websocket replay', origin)),
};

const brokers = (await api(gateway.url, 'GET', '/gateway')).data?.brokers ?? null;
await closeAll();
await nodes.stop();

// --- backlog: the brokers' own rate, publishing the whole log to fresh names after a restart ---------

/** Forgets how far each broker was published (as if configured the first time), with the gateway stopped. */
async function forgetBrokerCursors(): Promise<void> {
  if (store.kind === 'sqlite') {
    const db = new Database(join(store.env.GATEWAY_DATA_DIR!, 'gateway.sqlite'));
    db.prepare('delete from broker_cursors').run();
    db.close();
    return;
  }
  const db = new pg.Client({ connectionString: store.env.DATABASE_URL });
  await db.connect();
  await db.query('delete from broker_cursors');
  await db.end();
}
await forgetBrokerCursors();
const again = `${suffix}b`;
const backlogAmqp = await amqpConsumer(amqpUrl, `bench.destinations.${again}`);
const backlogNats = await natsConsumer(
  natsUrl,
  `BENCH_DESTINATIONS_${again.toUpperCase()}`,
  `bench.destinations.${again}`,
);
consumers.push(backlogAmqp, backlogNats);
const restarted = await startNodes(
  store,
  1,
  {
    GATEWAY_SEND_INTERVAL_MS: '0',
    LOG_LEVEL: 'info',
    GATEWAY_AMQP_URL: amqpUrl,
    GATEWAY_AMQP_EXCHANGE: `bench.destinations.${again}`,
    GATEWAY_NATS_URL: natsUrl,
    GATEWAY_NATS_STREAM: `BENCH_DESTINATIONS_${again.toUpperCase()}`,
    GATEWAY_NATS_SUBJECT_PREFIX: `bench.destinations.${again}`,
  },
  null,
);
const backlogStart = Date.now();
while ([backlogAmqp, backlogNats].some((c) => c.tally.seen.size < expected) && Date.now() - backlogStart < 120_000) {
  await new Promise((resolve) => setTimeout(resolve, 20));
}
const backlog = Object.fromEntries(
  [backlogAmqp, backlogNats].map(({ tally }) => {
    const first = tally.arrivals[0]?.at ?? 0;
    const last = tally.arrivals.at(-1)?.at ?? 0;
    return [
      tally.name,
      {
        events: tally.seen.size,
        all: tally.seen.size >= expected,
        duplicates: [...tally.seen.values()].filter((count) => count > 1).length,
        first_to_last_ms: last - first,
        events_per_second: Math.round(tally.seen.size / Math.max(0.001, (last - first) / 1000)),
      },
    ];
  }),
);
await closeAll();
await restarted.stop();
await store.close();

// --- results ---------------------------------------------------------------------------

function summary(tally: Tally): Record<string, unknown> {
  const inWindow = tally.arrivals.filter((a) => a.at >= windowStart && a.at < windowEnd).length;
  const latencies = tally.arrivals
    .filter((a) => a.created >= windowStart && a.created < windowEnd)
    .map((a) => a.at - a.created)
    .sort((a, b) => a - b);
  const pct = (p: number) =>
    latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))] ?? null;
  const first = tally.arrivals[0]?.at ?? 0;
  const last = tally.arrivals.at(-1)?.at ?? 0;
  return {
    events_per_second_in_window: Math.round(inWindow / ((windowEnd - windowStart) / 1000)),
    drain_events_per_second: Math.round(tally.seen.size / Math.max(0.001, (last - first) / 1000)),
    latency_ms: { p50: pct(50), p99: pct(99), max: latencies.at(-1) ?? null, events: latencies.length },
    received: tally.seen.size,
    all_arrived: tally.seen.size >= expected,
    duplicates: [...tally.seen.values()].filter((count) => count > 1).length,
    other_types: tally.others,
    last_after_load_ms: last - windowEnd,
  };
}

console.log(
  JSON.stringify(
    {
      benchmark: 'events to every destination at once (webhook, SSE, WebSocket, RabbitMQ, NATS JetStream)',
      machine: `${machine()}, ${cpus().length} CPUs (${cpus()[0]?.model ?? 'unknown'})`,
      time_utc: new Date(windowStart).toISOString(),
      store: kind,
      devices: deviceCount,
      offered_messages_per_second: messageRate,
      offered_events_per_second: messageRate * 3,
      seconds,
      messages_accepted: {
        in_window: measured.ok,
        total: warm.ok + measured.ok,
        non2xx: warm.non2xx + measured.non2xx,
      },
      events_expected: expected,
      drained_after_load_ms: drainedAfterMs,
      webhook_receiver: receiverOnThread ? 'a thread of its own' : "this process's event loop",
      // Callbacks of this process (load generator, consumers, and the receiver unless on a thread) waited this long
      // beyond their time: the sampler's delays less its 10 ms interval.
      benchmark_loop_delay_ms: {
        p50: Number(Math.max(0, loopDelay.percentile(50) / 1e6 - 10).toFixed(1)),
        p99: Number(Math.max(0, loopDelay.percentile(99) / 1e6 - 10).toFixed(1)),
      },
      destinations: Object.fromEntries(live.map((tally) => [tally.name, summary(tally)])),
      replay_from_log_start: replays,
      brokers_publishing_the_log_after_a_restart: backlog,
      brokers_at_end: brokers,
      cpu_cores_in_window: {
        gateway: Number((gatewayCpu / (windowEnd - windowStart)).toFixed(2)),
        consumers_and_load_generator: Number(
          ((selfCpu.user + selfCpu.system) / 1000 / (windowEnd - windowStart)).toFixed(2),
        ),
      },
      load_average: { start: loadAtStart, end: loadAverage() },
      ...(pgActivity === undefined ? {} : { pg_activity: pgActivity }),
    },
    null,
    2,
  ),
);
process.exit(0);
