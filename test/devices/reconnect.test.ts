// docs/internals.md, Devices and pairing and the architecture's lesson from other gateways: reconnects
// back off exponentially with jitter, and only a few devices connect at once,
// so a restart or a network blip does not stampede the network.
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
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
    this.connects.push({ deviceId: options.deviceId, at: Date.now() });
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

    const network = new ScriptedNetwork((_options, attempt) => (attempt <= 5 ? 'fail' : 'connect'));
    const gw = await startGateway({
      location: seed.location,
      build: { network, connections: { reconnectBaseMs: 40, reconnectMaxMs: 10_000 } },
    });
    open.push(gw);
    await gw.app.ready();
    await waitFor(
      async () => (await gw.request('GET', `/devices/${id}`)).body.data.connected,
      (connected) => connected === true,
      { what: 'connected after 5 failures', timeoutMs: 10_000 },
    );
    const times = network.connects.map((c) => c.at);
    expect(times).toHaveLength(6);
    // Gap n (after the nth failure) lies within [ceiling/2, ceiling] plus the 15 ms the attempt itself took.
    for (let n = 1; n <= 5; n++) {
      const gap = times[n]! - times[n - 1]! - 15;
      const ceiling = 40 * 2 ** (n - 1);
      expect(gap, `gap ${n}`).toBeGreaterThanOrEqual(ceiling / 2 - 5);
      // Timers are never early, but a busy host runs them late: the upper bound only
      // shows the wait is not far beyond its ceiling; the lower bounds show the doubling.
      expect(gap, `gap ${n}`).toBeLessThanOrEqual(ceiling + 250);
    }
  });

  it('waits longer after a replaced session and a refused protocol version, and says so in the log (docs/internals.md, WhatsApp and sandbox accounts)', async () => {
    const seed = await startSeed();
    open.push(seed);
    const [id] = await seedPairedDevices(seed, 1);
    await seed.close({ keepStore: true });
    open.pop();

    const script = ['replaced', 'outdated', 'outdated', 'fail'] as const;
    const network = new ScriptedNetwork((_options, attempt) => script[attempt - 1] ?? 'connect');
    const lines: string[] = [];
    const gw = await startGateway({
      location: seed.location,
      build: {
        network,
        logger: { level: 'warn', stream: { write: (line: string) => void lines.push(line) } },
        connections: { reconnectBaseMs: 10, reconnectMaxMs: 20, replacedRetryMs: 800, outdatedRetryMs: 1_200 },
      },
    });
    open.push(gw);
    await gw.app.ready();
    await waitFor(
      async () => (await gw.request('GET', `/devices/${id}`)).body.data.connected,
      (connected) => connected === true,
      { what: 'connected after the scripted drops', timeoutMs: 15_000 },
    );
    const times = network.connects.map((c) => c.at);
    expect(times).toHaveLength(5);
    const gaps = times.slice(1).map((t, i) => t - times[i]! - 15);
    // Each wait is at least its floor; a plain failure right after is back to the short backoff.
    expect(gaps[0]).toBeGreaterThanOrEqual(800 - 5);
    expect(gaps[1]).toBeGreaterThanOrEqual(1_200 - 5);
    expect(gaps[2]).toBeGreaterThanOrEqual(1_200 - 5);
    // Generous: on a loaded machine timers fire late, never early.
    expect(gaps[3]).toBeLessThan(700);
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
