// Issue 10 item 5: the store goes out of service under load and comes back.
// Everything answered 200 before, during and after is sent afterwards, every
// incoming message the network handed over is stored once and announced, no
// request answers 500 or waits more than a few seconds (503 with Retry-After
// instead), /readyz tells the truth, and all of it recovers by itself.
//
// PostgreSQL: a cluster of this test's own (test/helpers/own-postgres.ts),
// stopped (fast shutdown) and frozen (SIGSTOP, past the gateway's lease, so
// it drops its devices and takes them back) mid-run; never the machine's
// shared server. SQLite: the database may not grow (max_page_count at its
// current size): SQLite itself answers SQLITE_FULL to every write that needs
// space, as on a full disk.
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import type { SandboxControl } from '../../src/network/sandbox-control.js';
import type { ClusterTimings } from '../../src/cluster/node.js';
import { TEST_TOKEN, startGateway, storeKind, type StoreLocation, type TestGateway } from '../helpers/gateway.js';
import { postgresBinaries, startOwnPostgres, type OwnPostgres } from '../helpers/own-postgres.js';
import { waitForDevice } from '../helpers/pairing.js';
import { waitFor } from '../helpers/wait.js';
import { pairedWithWebhook, quickWebhooks, startReceiver, type Receiver } from '../events/helpers.js';

const PHONE = '6281500000061';
const RECIPIENT = '6281599990061';
const FRIEND = '6281599990062';
/** No request may wait longer than this, whatever the store does (connect 3 s + answer 6 s, plus a loaded machine). */
const LONGEST_ANSWER_MS = 12_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Load {
  /** Message ids answered 200. */
  readonly answered: string[];
  /** 503 answers seen (each checked for Retry-After). */
  readonly unavailable: number[];
  /** Texts of incoming messages the network handed over to the gateway. */
  readonly heard: string[];
  /** Anything that must not happen: another status, a missing Retry-After, a slow answer. */
  readonly problems: string[];
  stop(): Promise<void>;
}

/** Sends messages through the API and incoming messages through the network, continuously. */
function startLoad(gw: TestGateway, sandbox: SandboxControl, label: string): Load {
  const load = {
    answered: [] as string[],
    unavailable: [] as number[],
    heard: [] as string[],
    problems: [] as string[],
  };
  let running = true;
  const sending = (async () => {
    for (let n = 0; running; n++) {
      const started = Date.now();
      const res = await gw.app.inject({
        method: 'POST',
        url: '/messages',
        headers: { authorization: `Bearer ${TEST_TOKEN}` },
        payload: { device: PHONE, receiver: RECIPIENT, type: 'chat', params: { text: `${label} out ${n}` } },
      });
      const ms = Date.now() - started;
      if (ms > LONGEST_ANSWER_MS) load.problems.push(`an answer took ${ms} ms`);
      if (res.statusCode === 200) load.answered.push(res.json().data.id);
      else if (res.statusCode === 503) {
        load.unavailable.push(ms);
        const body = res.json();
        if (body.message !== 'Service unavailable' || res.headers['retry-after'] === undefined) {
          load.problems.push(`503 without its message or Retry-After: ${res.body}`);
        }
      } else load.problems.push(`${res.statusCode} ${res.body}`);
      await sleep(20);
    }
  })();
  const hearing = (async () => {
    for (let n = 0; running; n++) {
      const text = `${label} in ${n}`;
      try {
        await sandbox.sendFromPhone(FRIEND, PHONE, text);
        load.heard.push(text);
      } catch (error) {
        load.problems.push(`the network could not hand over ${text}: ${String(error)}`);
      }
      await sleep(30);
    }
  })();
  return {
    ...load,
    async stop() {
      running = false;
      await Promise.all([sending, hearing]);
    },
  };
}

/** Checks, with deadlines, that the outage lost nothing. */
async function nothingLost(gw: TestGateway, hooks: Receiver, load: Load): Promise<void> {
  expect(load.problems).toEqual([]);
  const { db } = gw.app.store;
  const answered = new Set(load.answered);
  // Every message answered 200 reached its phone and is recorded as sent (or further).
  await waitFor(
    async () => {
      const inbox = (await gw.request('GET', `/sandbox/phones/${RECIPIENT}`)).body.data.inbox as any[];
      const received = new Set(inbox.map((entry) => entry.message_id));
      return [...answered].filter((id) => !received.has(id)).length;
    },
    (missing) => missing === 0,
    { what: 'every answered message at its phone', timeoutMs: 45_000, intervalMs: 200 },
  );
  await waitFor(
    async () =>
      (
        await db
          .selectFrom('messages')
          .select(['id', 'status'])
          .where('id', 'in', [...answered])
          .execute()
      ).filter((row) => row.status === 'sent' || row.status === 'delivered').length,
    (done) => done === answered.size,
    { what: 'every answered message stored as sent', timeoutMs: 30_000, intervalMs: 200 },
  );
  // Every incoming message the network handed over is stored once and announced.
  const stored = await waitFor(
    async () =>
      (
        await db
          .selectFrom('messages')
          .select(['message'])
          .where('direction', '=', 'incoming')
          .where('sender', '=', FRIEND)
          .execute()
      ).map((row) => row.message),
    (texts) => load.heard.every((text) => texts.includes(text)),
    { what: 'every incoming message stored', timeoutMs: 30_000, intervalMs: 200 },
  );
  const label = load.heard[0]!.split(' ')[0]!;
  expect(stored.filter((text) => text?.startsWith(`${label} `)).sort()).toEqual([...load.heard].sort());
  const unannounced = () => {
    const announced = new Set(
      hooks
        .events()
        .filter((event) => event.type === 'message.incoming')
        .map((event) => event.data.message),
    );
    return load.heard.filter((text) => !announced.has(text));
  };
  await waitFor(unannounced, (missing) => missing.length === 0, {
    what: 'every incoming message announced',
    timeoutMs: 45_000,
    intervalMs: 200,
  }).catch(async (error: Error) => {
    const events = await db
      .selectFrom('webhook_events')
      .select(['status', 'attempts', 'payload'])
      .where('type', '=', 'message.incoming')
      .execute();
    const states = unannounced().map((text) => {
      const event = events.find((e) => JSON.parse(e.payload).data.message === text);
      return `${text}: ${event === undefined ? 'no event' : `${event.status} after ${event.attempts}`}`;
    });
    throw new Error(`${error.message}\n${states.join('\n')}`);
  });
  const ready = await gw.request('GET', '/readyz', undefined, null);
  expect(ready.status, JSON.stringify(ready.body)).toBe(200);
}

function sandboxOf(gw: TestGateway): SandboxControl {
  const sandbox = gw.app.services.network.sandbox;
  if (sandbox === undefined) throw new Error('the sandbox network is not running');
  return sandbox;
}

const build = {
  sandbox: { deliveryDelayMs: 5, readDelayMs: 5 },
  dispatch: { retryBaseMs: 50, retryMaxMs: 200 },
  webhooks: quickWebhooks,
};

describe.runIf(storeKind === 'postgres' && postgresBinaries() !== null)('PostgreSQL stopped and frozen', () => {
  let server: OwnPostgres;
  let gw: TestGateway;
  let hooks: Receiver;
  let dataDir: string;
  const warnings: string[] = [];
  let deviceId: number;
  beforeAll(async () => {
    server = await startOwnPostgres();
    hooks = await startReceiver();
    dataDir = await mkdtemp(join(tmpdir(), 'gw-outage-'));
    gw = await start({ databaseUrl: server.url, dataDir, drop: () => rm(dataDir, { recursive: true, force: true }) });
    deviceId = (await pairedWithWebhook(gw, PHONE, hooks.url)).id;
  }, 60_000);
  function start(location: StoreLocation, cluster?: ClusterTimings): Promise<TestGateway> {
    const logger = { level: 'warn', stream: { write: (line: string) => void warnings.push(line) } };
    return startGateway({
      location,
      config: { allowPrivateUrls: true, sendIntervalMs: 0 },
      build: { ...build, logger, ...(cluster === undefined ? {} : { cluster }) },
    });
  }
  afterAll(async () => {
    server?.thaw();
    await gw?.close();
    await hooks?.close();
    await server?.destroy();
  });

  it('loses nothing while the server is down, answers 503 meanwhile, and recovers by itself', async () => {
    const load = startLoad(gw, sandboxOf(gw), 'stopped');
    onTestFinished(() => load.stop());
    await waitFor(
      () => load.answered.length,
      (n) => n >= 5,
      { what: 'answers before the outage', timeoutMs: 10_000 },
    );
    await server.stop();
    await waitFor(
      () => load.unavailable.length,
      (n) => n >= 3,
      { what: '503 answers', timeoutMs: 15_000 },
    );
    const ready = await gw.request('GET', '/readyz', undefined, null);
    expect(ready.status).toBe(503);
    expect(ready.body).toMatchObject({ code: 503, status: 503, message: 'Not ready' });
    expect(ready.headers['retry-after']).toBeDefined();
    await sleep(1500);
    const heardDuringOutage = load.heard.length;
    await server.start();
    const answeredBefore = load.answered.length;
    await waitFor(
      () => load.answered.length,
      (n) => n >= answeredBefore + 5,
      {
        what: 'answers after the outage',
        timeoutMs: 20_000,
      },
    );
    await load.stop();
    expect(heardDuringOutage).toBeGreaterThan(0);
    await nothingLost(gw, hooks, load);
  }, 120_000);

  it('answers within seconds while the server is frozen, and loses nothing', async () => {
    // The same store, restarted with a lease of 6 s instead of 15 s (renewed every second): the freeze must outlast
    // the lease, and a shorter one is outlasted sooner. The stopped-server test keeps the default, so that no lease
    // runs out there in some runs and not in others.
    await gw.close({ keepStore: true });
    gw = await start(gw.location, { heartbeatMs: 1_000, leaseMs: 6_000, marginMs: 1_000 });
    await waitForDevice(gw, deviceId, (d) => d.connected === true, 'connected again after the restart');
    warnings.length = 0;
    const load = startLoad(gw, sandboxOf(gw), 'frozen');
    onTestFinished(() => load.stop());
    await waitFor(
      () => load.answered.length,
      (n) => n >= 5,
      { what: 'answers before the freeze', timeoutMs: 10_000 },
    );
    server.freeze();
    try {
      const started = Date.now();
      const ready = await gw.request('GET', '/readyz', undefined, null);
      expect(ready.status).toBe(503);
      expect(Date.now() - started).toBeLessThan(5_000);
      await waitFor(
        () => load.unavailable.length,
        (n) => n >= 5,
        { what: '503 answers', timeoutMs: 30_000 },
      );
      // One caller at a time waits out the silent server; the others are told at once.
      expect(Math.min(...load.unavailable), `503 answers took ${load.unavailable.join(', ')} ms`).toBeLessThan(1_000);
      // The freeze outlasts this node's lease, every time: the node drops its devices when the lease runs out and
      // takes them back and reconnects them after the thaw, and sends meanwhile answer 503 like the rest of the
      // outage. Waited for, not left to the machine's speed: a freeze that ended before the lease ran out in most
      // runs and after it in some made this test fail about one run in fifteen.
      await waitFor(
        () => warnings.some((line) => line.includes('the lease ran out before it could be renewed')),
        (ranOut) => ranOut,
        { what: "this node's lease to run out", timeoutMs: 30_000, intervalMs: 100 },
      );
    } finally {
      server.thaw();
    }
    const answeredBefore = load.answered.length;
    await waitFor(
      () => load.answered.length,
      (n) => n >= answeredBefore + 5,
      {
        what: 'answers after the freeze',
        timeoutMs: 20_000,
      },
    );
    await load.stop();
    await nothingLost(gw, hooks, load);
  }, 120_000);
});

describe.runIf(storeKind === 'sqlite')('SQLite that cannot grow (a full disk)', () => {
  let gw: TestGateway;
  let hooks: Receiver;
  const logLines: string[] = [];
  beforeAll(async () => {
    hooks = await startReceiver();
    gw = await startGateway({
      config: { allowPrivateUrls: true, sendIntervalMs: 0 },
      build: { ...build, logger: { level: 'info', stream: { write: (line: string) => void logLines.push(line) } } },
    });
    await pairedWithWebhook(gw, PHONE, hooks.url);
  });
  afterAll(async () => {
    await gw?.close();
    await hooks?.close();
  });

  it('loses nothing, answers 503, says not ready naming SQLITE_FULL, and recovers when space comes back', async () => {
    const { db } = gw.app.store;
    const limit = async () => (await sql<{ max_page_count: number }>`pragma max_page_count`.execute(db)).rows[0]!;
    const original = (await limit()).max_page_count;
    const load = startLoad(gw, sandboxOf(gw), 'full');
    onTestFinished(() => load.stop());
    await waitFor(
      () => load.answered.length,
      (n) => n >= 5,
      { what: 'answers before the disk fills', timeoutMs: 10_000 },
    );
    const pages = (await sql<{ page_count: number }>`pragma page_count`.execute(db)).rows[0]!.page_count;
    await sql.raw(`pragma max_page_count = ${pages}`).execute(db);
    await waitFor(
      () => load.unavailable.length,
      (n) => n >= 3,
      { what: '503 answers', timeoutMs: 15_000 },
    );
    // Some writes still fit (updates in place, pages freed by deletes), so readiness is polled: it must say so.
    const ready = await waitFor(
      () => gw.request('GET', '/readyz', undefined, null),
      (answer) => answer.status === 503,
      { what: '/readyz not ready', timeoutMs: 10_000, intervalMs: 50 },
    );
    expect(ready.body).toEqual({
      code: 503,
      status: 503,
      message: 'Not ready',
      error: 'the store cannot write (SQLITE_FULL)',
    });
    expect(ready.headers['retry-after']).toBe('5');
    await sleep(1000);
    await sql.raw(`pragma max_page_count = ${original}`).execute(db);
    const answeredBefore = load.answered.length;
    await waitFor(
      () => load.answered.length,
      (n) => n >= answeredBefore + 5,
      {
        what: 'answers after space came back',
        timeoutMs: 20_000,
      },
    );
    await load.stop();
    await nothingLost(gw, hooks, load);
    const log = logLines.join('');
    expect(log).toContain('SQLITE_FULL');
    expect(log).not.toContain('cannot rollback');
  }, 120_000);
});
