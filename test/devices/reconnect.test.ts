// docs/internals.md, Devices and pairing and the architecture's lesson from other gateways: reconnects
// back off exponentially with jitter, and only a few devices connect at once,
// so a restart or a network blip does not stampede the network. The backoff runs on the gateway's clock: the
// tests that check its waits move a FakeClock and read each wait exactly, whatever the machine's load.
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/clock.js';
import type { Network, NetworkConnection, NetworkEventHandler, ConnectOptions } from '../../src/network/network.js';
import { NetworkUnavailableError } from '../../src/network/network.js';
import { noStoreAvailable, startGateway, storeKind, type TestGateway } from '../helpers/gateway.js';
import { waitFor } from '../helpers/wait.js';

/** A network at the edge of the outside world, scripted by the test. */
class ScriptedNetwork implements Network {
  readonly description = 'scripted test network';
  readonly connects: Array<{ deviceId: number; at: number }> = [];
  inFlight = 0;
  maxInFlight = 0;
  /** The time a connect is recorded at: the gateway's clock where a test moves it. */
  now: () => number = () => Date.now();
  constructor(
    private readonly behaviour: (
      options: ConnectOptions,
      attempt: number,
    ) => 'connect' | 'fail' | 'replaced' | 'outdated',
    /** What each connection's settled() waits for: writes it still makes after close (a WhatsApp session's). */
    private readonly backgroundWrites: () => Promise<void> = () => Promise.resolve(),
    /** How long a connect takes before the network answers it. */
    private readonly connectMs = 15,
  ) {}

  connect(options: ConnectOptions, onEvent: NetworkEventHandler): NetworkConnection {
    const attempt = this.connects.filter((c) => c.deviceId === options.deviceId).length + 1;
    this.connects.push({ deviceId: options.deviceId, at: this.now() });
    this.inFlight += 1;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    let closed = false;
    let settled = false;
    const timer = setTimeout(() => {
      settled = true;
      this.inFlight -= 1;
      if (closed) return;
      const outcome = this.behaviour(options, attempt);
      if (outcome === 'connect') onEvent({ type: 'connected', phone: '628100000000' });
      else if (outcome === 'fail') onEvent({ type: 'disconnected', reason: 'refused by test' });
      else onEvent({ type: 'disconnected', reason: `${outcome} by test`, retry: outcome });
    }, this.connectMs);
    const unavailable = () => Promise.reject(new NetworkUnavailableError());
    return {
      sendMessage: unavailable,
      sendTyping: unavailable,
      sendPresence: unavailable,
      listGroups: unavailable,
      getGroup: unavailable,
      createGroup: unavailable,
      addParticipants: unavailable,
      updateGroup: unavailable,
      changeParticipants: unavailable,
      groupInvite: unavailable,
      joinGroup: unavailable,
      modifyChat: unavailable,
      leaveGroup: unavailable,
      rejectCall: unavailable,
      checkNumbers: unavailable,
      logout: unavailable,
      requestPairingCode: unavailable,
      settled: () => this.backgroundWrites(),
      close: () => {
        closed = true;
        clearTimeout(timer);
        if (!settled) this.inFlight -= 1;
        settled = true;
      },
    };
  }
  async close(): Promise<void> {}
}

/**
 * The gateway that makes the devices, on a network that refuses every connection. On PostgreSQL its cluster takes
 * each device marked paired below and connects it; on the sandbox the made-up session would be refused and the
 * device logged out before the gateway under test ever saw it paired.
 */
function startSeed(): Promise<TestGateway> {
  return startGateway({ build: { network: new ScriptedNetwork(() => 'fail') } });
}

async function seedPairedDevices(gw: TestGateway, count: number): Promise<number[]> {
  await gw.app.services.accounts.setMaxDevices('default', count);
  const ids: number[] = [];
  for (let i = 0; i < count; i++) {
    const id = (await gw.request('POST', '/devices', { package: 'BETA', name: `fleet ${i}` })).body.data.id as number;
    await gw.app.store.db
      .updateTable('devices')
      .set({
        paired_status: 'PAIRED',
        network_session: `session-${id}`,
        phone: `62810000${String(id).padStart(4, '0')}`,
      })
      .where('id', '=', id)
      .execute();
    ids.push(id);
  }
  return ids;
}

describe.skipIf(noStoreAvailable)('reconnecting', () => {
  const open: TestGateway[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((gw) => gw.close()));
  });

  it('reconnects 60 paired devices after a restart with at most 5 connecting at once', async () => {
    const seed = await startSeed();
    open.push(seed);
    await seedPairedDevices(seed, 60);
    await seed.close({ keepStore: true });
    open.pop();

    // Each connect takes 300 ms: long enough that the five slots are all taken at once even when starting a
    // connect is slow on a loaded host (with 15 ms, a loaded PostgreSQL run once never had more than 4 in flight).
    const network = new ScriptedNetwork(
      () => 'connect',
      () => Promise.resolve(),
      300,
    );
    const gw = await startGateway({
      location: seed.location,
      build: { network, connections: { maxConcurrentConnects: 5 } },
    });
    open.push(gw);
    await gw.app.ready();
    await waitFor(
      async () => (await gw.request('GET', '/devices?per_page=100')).body.data.filter((d: any) => d.connected).length,
      (n) => n === 60,
      { what: 'all 60 connected', timeoutMs: 30_000 },
    );
    expect(network.maxInFlight).toBeLessThanOrEqual(5);
    expect(network.maxInFlight).toBe(5);
    expect(network.connects).toHaveLength(60);
  });

  it('a stopping gateway waits for what closed connections still write, before their devices are handed on', async () => {
    const seed = await startSeed();
    open.push(seed);
    await seedPairedDevices(seed, 2);
    await seed.close({ keepStore: true });
    open.pop();

    let finishWrites!: () => void;
    const writes = new Promise<void>((resolve) => (finishWrites = resolve));
    let asked = 0;
    const network = new ScriptedNetwork(
      () => 'connect',
      () => {
        asked += 1;
        return writes;
      },
    );
    const gw = await startGateway({ location: seed.location, build: { network } });
    open.push(gw);
    await waitFor(
      async () => (await gw.request('GET', '/devices')).body.data.filter((d: any) => d.connected).length,
      (n) => n === 2,
      { what: 'both connected' },
    );
    let closed = false;
    open.pop();
    const closing = gw.close().then(() => (closed = true));
    await waitFor(
      () => asked,
      (n) => n === 2,
      { what: 'both connections asked' },
    );
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(closed).toBe(false);
    if (storeKind === 'postgres') {
      // The leases are still this node's while the writes are under way: no other node could take the devices yet.
      const leases = await sql<{ n: number }>`select count(*)::int as n from device_leases`.execute(gw.app.store.db);
      expect(leases.rows[0]!.n).toBe(2);
    }
    finishWrites();
    await closing;
    expect(closed).toBe(true);
  });

  it('backs off exponentially with jitter between failed attempts', async () => {
    const seed = await startSeed();
    open.push(seed);
    const [id] = await seedPairedDevices(seed, 1);
    await seed.close({ keepStore: true });
    open.pop();

    const clock = new FakeClock(Date.now());
    // The jitter's draws in turn: each wait is ceiling/2 + draw × ceiling/2, the ceiling doubling from 40 ms.
    const draws = [0, 0.5, 1, 0.25, 0.5];
    let drawn = 0;
    const network = new ScriptedNetwork((_options, attempt) => (attempt <= 5 ? 'fail' : 'connect'));
    network.now = () => clock.now();
    const gw = await startGateway({
      location: seed.location,
      clock,
      build: {
        network,
        connections: { reconnectBaseMs: 40, reconnectMaxMs: 10_000, reconnectJitter: () => draws[drawn++]! },
        // No webhook poll among the clock's timers while the test reads them.
        webhooks: { pollIntervalMs: 3_600_000 },
      },
    });
    open.push(gw);
    await gw.app.ready();
    const waits = await followBackoff(clock, network, [20, 60, 160, 200, 480]);
    await waitFor(
      async () => (await gw.request('GET', `/devices/${id}`)).body.data.connected,
      (connected) => connected === true,
      { what: 'connected after 5 failures', timeoutMs: 10_000 },
    );
    // The waits, as the clock counted them from one attempt to the next (the connect itself takes no clock time).
    expect(waits).toEqual([20, 60, 160, 200, 480]);
    expect(network.connects).toHaveLength(6);
    expect(drawn).toBe(5);
  });

  it('waits longer after a replaced session and a refused protocol version, and says so in the log (docs/internals.md, WhatsApp and sandbox accounts)', async () => {
    const seed = await startSeed();
    open.push(seed);
    const [id] = await seedPairedDevices(seed, 1);
    await seed.close({ keepStore: true });
    open.pop();

    const clock = new FakeClock(Date.now());
    const script = ['replaced', 'outdated', 'outdated', 'fail'] as const;
    const network = new ScriptedNetwork((_options, attempt) => script[attempt - 1] ?? 'connect');
    network.now = () => clock.now();
    const lines: string[] = [];
    const gw = await startGateway({
      location: seed.location,
      clock,
      build: {
        network,
        logger: { level: 'warn', stream: { write: (line: string) => void lines.push(line) } },
        connections: {
          reconnectBaseMs: 10,
          reconnectMaxMs: 20,
          reconnectJitter: () => 0.5,
          replacedRetryMs: 810,
          outdatedRetryMs: 1_230,
        },
        webhooks: { pollIntervalMs: 3_600_000 },
      },
    });
    open.push(gw);
    await gw.app.ready();
    // Each wait is its floor; a plain failure right after is back to the short backoff (ceiling 20: 15 at 0.5).
    const waits = await followBackoff(clock, network, [810, 1_230, 1_230, 15]);
    await waitFor(
      async () => (await gw.request('GET', `/devices/${id}`)).body.data.connected,
      (connected) => connected === true,
      { what: 'connected after the scripted drops', timeoutMs: 15_000 },
    );
    expect(waits).toEqual([810, 1_230, 1_230, 15]);
    expect(network.connects).toHaveLength(5);
    const logged = lines.map((line) => JSON.parse(line) as { level: number; msg: string; deviceId?: number });
    expect(logged.filter((l) => l.msg.startsWith('another client replaced'))).toMatchObject([
      { level: 40, deviceId: id },
    ]);
    // An error once per device, not once per retry.
    expect(logged.filter((l) => l.msg.startsWith('the network refused the client protocol version'))).toMatchObject([
      { level: 50, deviceId: id },
    ]);
  });
});

/**
 * Follows a device's failing connects on a clock only the test moves: after each failure, waits for the reconnect
 * timer at exactly `expected[n]` past the failed attempt, shows it has not run a millisecond before, moves the
 * clock onto it and waits for the next connect. Answers the waits between the connects as the clock counted them.
 */
async function followBackoff(
  clock: FakeClock,
  network: ScriptedNetwork,
  expected: readonly number[],
): Promise<number[]> {
  for (let n = 1; n <= expected.length; n++) {
    await waitFor(
      () => network.connects.length,
      (count) => count === n,
      { what: `connect ${n}` },
    );
    // The clock stands still while the attempt fails: the drop is handled at the attempt's time.
    const due = network.connects[n - 1]!.at + expected[n - 1]!;
    await waitFor(
      () => clock.dueTimes,
      (times) => times.includes(due),
      { what: `connect ${n + 1} scheduled at +${expected[n - 1]} ms` },
    );
    clock.set(due - 1);
    expect(clock.dueTimes, `wait ${n} not over a millisecond early`).toContain(due);
    expect(network.connects).toHaveLength(n);
    clock.set(due);
    expect(clock.dueTimes, `wait ${n} over on time`).not.toContain(due);
  }
  await waitFor(
    () => network.connects.length,
    (count) => count === expected.length + 1,
    { what: 'the last connect' },
  );
  const times = network.connects.map((c) => c.at);
  return times.slice(1).map((t, i) => t - times[i]!);
}
