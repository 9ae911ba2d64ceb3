// Benchmark (issue 27, Measure): `GET /chats` latency for a device with 10,000 chats and 1,000,000 messages at a
// steady 50 requests/s (goal: p99 under 20 ms), and what keeping the chat list costs each accepted message: the
// `POST /messages` accept rate of this build against a build without chat maintenance, in alternating rounds of the
// same run (the host's speed drifts), each gateway on a fresh store of its own.
//
// The messages are seeded straight into the store, one INSERT … SELECT over a generated series per store (half of
// them received, a third of those unread), and the chats from them in one more (as migration 013a fills them); the
// gateway (the built `dist/main.js`, sandbox network in process) then answers from its own tables.
//
//   npm run build && node --import tsx bench/chats.ts [seconds] [rounds] [connections] [chats] [messages]
//   BENCH_STORE=postgres ... (a fresh database on the machine's PostgreSQL, dropped at the end)
//   BENCH_BASELINE=<a build without chat maintenance>/main.js ... the accept-rate comparison (skipped without it)
//   BENCH_CONNECTIONS=1 ... the GET requests evenly spaced on one connection (default 10 connections at RATE/10 each,
//   whose timers fire in step: bursts of 10 requests at once)
import autocannon from 'autocannon';
import { execFileSync } from 'node:child_process';
import { join, dirname } from 'node:path';
import { cpus } from 'node:os';
import Database from 'better-sqlite3';
import pg from 'pg';
import { TOKEN, api, machine, median, pairDevice, messagesRequest } from './lib.js';
import { loadAverage, openBenchStore, startNodes, storeKind, type BenchStore, type Nodes } from './stores.js';

const seconds = Number(process.argv[2] ?? 10);
const rounds = Number(process.argv[3] ?? 4);
const connections = Number(process.argv[4] ?? 50);
const chatCount = Number(process.argv[5] ?? 10_000);
const messageCount = Number(process.argv[6] ?? 1_000_000);
const RATE = 50;
const DEVICE = '6281470000007';

const kind = storeKind();
const loadAtStart = loadAverage();
const stores: BenchStore[] = [];
const running: Nodes[] = [];

/** The seed: every message in one statement, then the chats from them. Answers the seconds it took. */
async function seed(store: BenchStore, deviceId: number): Promise<number> {
  const started = Date.now();
  const base = Date.now() - messageCount * 10;
  const chatOf = (x: string) => `(6283000000000 + (${x} % ${chatCount}))`;
  const columns = `id, account_id, device_id, direction, type, device_phone, receiver, sender, message, file_url, params,
    simulate_typing, status, failed_reason, attempts, next_attempt_at, created_at, sent_at, delivered_at, read_at,
    failed_at, rendered_as, chat`;
  const chatsFromMessages = `
    insert into chats (device_id, chat, account_id, type, name, last_message_id, last_message_at, unread_count,
                       archived, pinned, muted_until, updated_at)
    select m.device_id, m.chat, 1, 'user', null,
           (select l.id from messages l where l.device_id = m.device_id and l.chat = m.chat
             order by l.created_at desc, l.id desc limit 1),
           max(m.created_at), sum(case when m.direction = 'incoming' and m.read_at is null then 1 else 0 end),
           0, 0, null, max(m.created_at)
    from messages m where m.device_id = ${deviceId} group by m.device_id, m.chat`;
  if (store.kind === 'sqlite') {
    const db = new Database(join(store.env.GATEWAY_DATA_DIR!, 'gateway.sqlite'));
    db.pragma('busy_timeout = 60000');
    const chat = `cast(${chatOf('x')} as text)`;
    db.exec(`
      insert into messages (${columns})
      with recursive s(x) as (select 1 union all select x + 1 from s where x < ${messageCount})
      select printf('01BENCH%019d', x), 1, ${deviceId}, case when x % 2 = 0 then 'incoming' else 'outgoing' end,
        'chat', '${DEVICE}', case when x % 2 = 0 then '${DEVICE}' else ${chat} end,
        case when x % 2 = 0 then ${chat} else null end, 'message ' || x, null, '{}', 0, 'delivered', null, 1,
        ${base} + x * 10, ${base} + x * 10, ${base} + x * 10, ${base} + x * 10,
        case when x % 6 = 0 then null else ${base} + x * 10 end, null, null, ${chat}
      from s`);
    db.exec(chatsFromMessages);
    db.close();
  } else {
    const db = new pg.Client({ connectionString: store.env.DATABASE_URL });
    await db.connect();
    const chat = `(${chatOf('x')})::text`;
    await db.query(`
      insert into messages (${columns})
      select '01BENCH' || lpad(x::text, 19, '0'), 1, ${deviceId}, case when x % 2 = 0 then 'incoming' else 'outgoing' end,
        'chat', '${DEVICE}', case when x % 2 = 0 then '${DEVICE}' else ${chat} end,
        case when x % 2 = 0 then ${chat} else null end, 'message ' || x, null, '{}', 0, 'delivered', null, 1,
        ${base} + x * 10, ${base} + x * 10, ${base} + x * 10, ${base} + x * 10,
        case when x % 6 = 0 then null else ${base} + x * 10 end, null, null, ${chat}
      from generate_series(1, ${messageCount}) as x`);
    await db.query(chatsFromMessages);
    await db.query('analyze messages');
    await db.query('analyze chats');
    await db.end();
  }
  return (Date.now() - started) / 1000;
}

/** `path` at a steady RATE requests/s for `duration` seconds: latency percentiles. */
async function steady(base: string, path: string, duration: number) {
  const result = await autocannon({
    url: base,
    // 10 connections at RATE/10 each fire in step (bursts of 10 at once); BENCH_CONNECTIONS=1 spaces them evenly.
    connections: Number(process.env.BENCH_CONNECTIONS ?? 10),
    overallRate: RATE,
    duration,
    requests: [{ method: 'GET', path, headers: { authorization: `Bearer ${TOKEN}` } }],
  });
  return {
    requests: result.requests.total,
    p50_ms: result.latency.p50,
    p90_ms: result.latency.p90,
    p99_ms: result.latency.p99,
    max_ms: result.latency.max,
    non2xx: result.non2xx + result.errors + result.timeouts,
  };
}

/** POST /messages flat out for `duration` seconds on one gateway: accepted per second. */
async function accept(base: string, device: string, duration: number) {
  const result = await autocannon({
    url: base,
    connections,
    duration,
    requests: [
      messagesRequest((i) => ({
        device,
        receiver: `6282${String(20_000_000 + (i % 2000) * 10 + 7)}`,
        type: 'chat',
        message: `message ${i}`,
      })),
    ],
  });
  return {
    rps: Math.round(result.requests.average),
    p99_ms: result.latency.p99,
    non2xx: result.non2xx + result.errors,
  };
}

try {
  const store = await openBenchStore(kind);
  stores.push(store);
  store.cli('migrate', '--create');
  const nodes = await startNodes(store, 1, { LOG_LEVEL: 'info' }, null);
  running.push(nodes);
  const base = nodes.urls[0]!;
  const created = await api(base, 'POST', '/devices', { package: 'STARTUP240K', name: 'chats', phone: DEVICE });
  const deviceId = created.data.id as number;
  const seedSeconds = await seed(store, deviceId);

  const first = await api(base, 'GET', `/chats?device=${DEVICE}&limit=20`);
  if (first.data.length !== 20 || first.data[0].last_message === null)
    throw new Error('the seeded chats are not listed');
  const deep = (await api(base, 'GET', `/chats?device=${DEVICE}&limit=20&cursor=${first.next_cursor}`)).next_cursor;
  await steady(base, `/chats?device=${DEVICE}&limit=20`, 3); // warm-up
  const list = await steady(base, `/chats?device=${DEVICE}&limit=20`, seconds * 2);
  const nextPage = await steady(base, `/chats?device=${DEVICE}&limit=20&cursor=${deep}`, seconds);
  const history = await steady(base, `/chats/6283000000042/messages?device=${DEVICE}&limit=20`, seconds);

  // The accept rate with and without chat maintenance: this build against BENCH_BASELINE, alternating.
  const comparison: Array<Record<string, unknown>> = [];
  const baseline = process.env.BENCH_BASELINE;
  if (baseline !== undefined) {
    const other = await openBenchStore(kind);
    stores.push(other);
    execFileSync(process.execPath, [join(dirname(baseline), 'cli/main.js'), 'migrate', '--create'], {
      env: { ...process.env, ...other.env },
      stdio: 'ignore',
    });
    const previous = process.env.BENCH_GATEWAY;
    process.env.BENCH_GATEWAY = baseline;
    const old = await startNodes(other, 1, { LOG_LEVEL: 'info' }, null, 'baseline');
    running.push(old);
    if (previous === undefined) delete process.env.BENCH_GATEWAY;
    else process.env.BENCH_GATEWAY = previous;
    // This build on a fresh store of its own too: both sides accept into stores of the same size (the seeded one
    // would make this build's inserts pay for a million rows' indexes, which is not the chat list's cost).
    const fresh = await openBenchStore(kind);
    stores.push(fresh);
    fresh.cli('migrate', '--create');
    const mine = await startNodes(fresh, 1, { LOG_LEVEL: 'info' }, null, 'fresh');
    running.push(mine);
    const withUrl = mine.urls[0]!;
    const sender = '6281470000017';
    await pairDevice(withUrl, sender, 'STARTUP240K');
    await pairDevice(old.urls[0]!, sender, 'STARTUP240K');
    await accept(withUrl, sender, 2);
    await accept(old.urls[0]!, sender, 2);
    for (let round = 0; round < rounds; round++) {
      const load = loadAverage();
      const order = round % 2 === 0 ? (['with', 'without'] as const) : (['without', 'with'] as const);
      const result: Record<string, unknown> = { round: round + 1, load_average: load };
      for (const which of order)
        result[which] = await accept(which === 'with' ? withUrl : old.urls[0]!, sender, seconds);
      const withRps = (result.with as { rps: number }).rps;
      const withoutRps = (result.without as { rps: number }).rps;
      result.ratio = Number((withRps / withoutRps).toFixed(3));
      comparison.push(result);
      console.error(JSON.stringify(result));
    }
  }

  console.log(
    JSON.stringify(
      {
        benchmark: 'GET /chats at 50 req/s; POST /messages accept rate with and without chat maintenance',
        machine: `${machine()}, ${cpus().length} CPUs (${cpus()[0]?.model ?? 'unknown'})`,
        store: kind,
        chats: chatCount,
        messages: messageCount,
        seed_seconds: seedSeconds,
        load_average: { start: loadAtStart, end: loadAverage() },
        get_chats_first_page: list,
        get_chats_second_page: nextPage,
        get_chat_messages: history,
        accept_rounds: comparison,
        median_ratio_with_to_without:
          comparison.length === 0 ? null : Number(median(comparison.map((r) => r.ratio as number)).toFixed(3)),
      },
      null,
      2,
    ),
  );
} finally {
  for (const nodes of running.reverse()) await nodes.stop();
  for (const store of stores) await store.close();
}
