// docs/internals.md, Devices and pairing (issue 10 item 3): a SUSPENDED device sends nothing. What it
// had queued waits, and goes out, in order and once each, when the device is
// made active again. Suspended through the CLI (another process on the same
// store: the running gateway learns it from the store) and through the
// service the server itself holds. The gateway runs on a FakeClock: the send interval and the queue's time limit
// pass when the test moves the clock, so no test waits them out in real time.
import { afterEach, describe, expect, it } from 'vitest';
import { runCli, type CliIo } from '../../src/cli/main.js';
import { FakeClock } from '../../src/clock.js';
import { noStoreAvailable, startGateway, type StartOptions, type TestGateway } from '../helpers/gateway.js';
import { createPairedDevice, waitForDevice } from '../helpers/pairing.js';
import { waitFor } from '../helpers/wait.js';

const INTERVAL_MS = 600;
/** Real time given to a lane after each move of the clock to send what came due (none may, while suspended). */
const SETTLE_MS = 200;

const settle = () => new Promise((resolve) => setTimeout(resolve, SETTLE_MS));

async function cli(gw: TestGateway, ...argv: string[]): Promise<{ code: number; out: string }> {
  const out: string[] = [];
  const io: CliIo = {
    env: {
      GATEWAY_DATA_DIR: gw.location.dataDir,
      ...(gw.location.databaseUrl === null ? {} : { DATABASE_URL: gw.location.databaseUrl }),
    },
    out: (line) => out.push(line),
    err: (line) => out.push(line),
  };
  const code = await runCli(argv, io);
  return { code, out: out.join('\n') };
}

describe.skipIf(noStoreAvailable)('suspending a device stops its queue', () => {
  let gw: TestGateway;
  let clock: FakeClock;
  /** Each test starts its own gateway, on a clock of its own. */
  async function start(options: Omit<StartOptions, 'clock'>): Promise<void> {
    clock = new FakeClock(Date.now());
    gw = await startGateway({ ...options, clock });
  }
  const paced = {
    config: { sendIntervalMs: INTERVAL_MS },
    build: { connections: { reconnectBaseMs: 20, reconnectMaxMs: 200 } },
  };
  afterEach(async () => {
    await gw.close();
  });

  const status = async (id: string) => (await gw.request('GET', `/messages/${id}`)).body.data.status as string;
  const inbox = async (phone: string): Promise<string[]> => {
    const res = await gw.request('GET', `/sandbox/phones/${phone}`);
    return res.status === 200 ? (res.body.data.inbox as Array<{ message_id: string }>).map((e) => e.message_id) : [];
  };

  async function queue(device: string, receiver: string, count: number): Promise<string[]> {
    const ids: string[] = [];
    for (let i = 0; i < count; i++) {
      const res = await gw.request('POST', '/messages', { device, receiver, type: 'chat', params: { text: `m${i}` } });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      ids.push(res.body.data.id as string);
    }
    return ids;
  }

  /** Polls `probe` until `accept`, moving the gateway's clock one send interval before each look. */
  function moving<T>(probe: () => Promise<T>, accept: (value: T) => boolean, what: string): Promise<T> {
    return waitFor(
      () => {
        clock.advance(INTERVAL_MS);
        return probe();
      },
      accept,
      { what, timeoutMs: 15_000, intervalMs: 50 },
    );
  }

  /** Suspended right after the first left: nothing more for several intervals, then all of it on resume. */
  async function suspendMidQueue(suspend: () => Promise<void>, resume: () => Promise<void>, phone: string) {
    const receiver = `${phone.slice(0, -4)}9999`;
    const ids = await queue(phone, receiver, 8);
    await waitFor(
      () => inbox(receiver),
      (got) => got.length >= 1,
      { what: 'the first message at the phone' },
    );
    await suspend();
    // The clock has not moved since the first left: nothing else was due. Five intervals of it now pass, each with
    // time for the lane to send what came due; a suspended device sends none of it.
    expect(await inbox(receiver)).toEqual(ids.slice(0, 1));
    for (let i = 0; i < 5; i++) {
      clock.advance(INTERVAL_MS);
      await settle();
    }
    expect(await inbox(receiver)).toEqual(ids.slice(0, 1));
    for (const id of ids.slice(1)) expect(await status(id)).toBe('pending');
    const refused = await gw.request('POST', '/messages', {
      device: phone,
      receiver,
      type: 'chat',
      params: { text: 'while suspended' },
    });
    expect(refused.body).toEqual({ code: 403, status: 403, message: 'Device suspended' });

    await resume();
    for (const id of ids)
      await moving(
        () => status(id),
        (s) => s === 'delivered',
        `${id} delivered after the resume`,
      );
    expect(await inbox(receiver)).toEqual(ids);
  }

  it('through the CLI, against the running gateway', async () => {
    await start(paced);
    const phone = '6281700001101';
    const device = await createPairedDevice(gw, phone);
    await suspendMidQueue(
      async () => {
        const done = await cli(gw, 'devices', 'suspend', String(device.id));
        expect(done).toEqual({ code: 0, out: `Device ${device.id} is now SUSPENDED.` });
      },
      async () => {
        const done = await cli(gw, 'devices', 'resume', String(device.id));
        expect(done).toEqual({ code: 0, out: `Device ${device.id} is now ACTIVE.` });
      },
      phone,
    );
  });

  it('a queue that waits on a suspended device past the time limit fails, with its quota back', async () => {
    await start({ config: { sendIntervalMs: 60_000 }, build: { dispatch: { maxQueuedMs: 1500 } } });
    const phone = '6281700001301';
    const device = await createPairedDevice(gw, phone, { package: 'BETA' });
    const ids = await queue(phone, '6281799991301', 3);
    await waitFor(
      () => status(ids[0]!),
      (s) => s === 'sent' || s === 'delivered',
      { what: 'the first sent' },
    );
    expect((await cli(gw, 'devices', 'suspend', String(device.id))).code).toBe(0);
    // No interval any more: the lane looks at its queue at once and finds the device suspended.
    expect((await gw.request('PATCH', `/devices/${device.id}`, { send_interval_ms: 0 })).status).toBe(200);
    // Queued when the clock stood where it stands now: short of the limit, they wait.
    clock.advance(1400);
    await settle();
    for (const id of ids.slice(1)) expect(await status(id)).toBe('pending');
    for (const id of ids.slice(1)) {
      const m = await moving(
        async () => (await gw.request('GET', `/messages/${id}`)).body.data,
        (row) => row.status !== 'pending',
        `${id} failed`,
      );
      expect(m).toMatchObject({
        status: 'failed',
        failed_reason: 'device suspended for longer than a message may stay queued',
      });
    }
    const after = (await gw.request('GET', `/devices/${device.id}`)).body.data;
    expect(after.subscription).toEqual({ quote_available: '249', quote_used: '1' });
  });

  it('through the service the server holds: the connection closes, and reopens on resume', async () => {
    await start(paced);
    const phone = '6281700001201';
    const device = await createPairedDevice(gw, phone);
    await suspendMidQueue(
      async () => {
        await gw.app.services.devices.setStatus(device.id, 'SUSPENDED');
        const d = await waitForDevice(gw, device.id, (row) => row.connected === false, 'offline once suspended');
        expect(d).toMatchObject({ status: 'SUSPENDED', paired_status: 'PAIRED' });
      },
      async () => {
        await gw.app.services.devices.setStatus(device.id, 'ACTIVE');
        await waitForDevice(gw, device.id, (row) => row.connected === true, 'connected again once active');
      },
      phone,
    );
  });
});
