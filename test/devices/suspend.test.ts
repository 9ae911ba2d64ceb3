// docs/internals.md, Devices and pairing (issue 10 item 3): a SUSPENDED device sends nothing. What it
// had queued waits, and goes out, in order and once each, when the device is
// made active again. Suspended through the CLI (another process on the same
// store: the running gateway learns it from the store) and through the
// service the server itself holds.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli, type CliIo } from '../../src/cli/main.js';
import { noStoreAvailable, startGateway, type TestGateway } from '../helpers/gateway.js';
import { createPairedDevice, waitForDevice } from '../helpers/pairing.js';
import { waitFor } from '../helpers/wait.js';

const INTERVAL_MS = 600;

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
  beforeEach(async () => {
    gw = await startGateway({
      config: { sendIntervalMs: INTERVAL_MS },
      build: { connections: { reconnectBaseMs: 20, reconnectMaxMs: 200 } },
    });
  });
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
    // Counted once the suspension has committed (on a loaded host the CLI itself may take longer than an
    // interval, so more than the first may have gone by then). A send already past the lane's check when it
    // committed may still land (well within 300 ms; the next one is due an interval later): at most one more.
    const atCommit = (await inbox(receiver)).length;
    await new Promise((resolve) => setTimeout(resolve, 300));
    const atSuspension = (await inbox(receiver)).length;
    expect(atSuspension).toBeLessThanOrEqual(atCommit + 1);
    expect(atSuspension, 'some of the queue is still waiting, so the resume is tested').toBeLessThan(ids.length);
    await new Promise((resolve) => setTimeout(resolve, 5 * INTERVAL_MS));
    expect(await inbox(receiver)).toEqual(ids.slice(0, atSuspension));
    for (const id of ids.slice(atSuspension)) expect(await status(id)).toBe('pending');
    const refused = await gw.request('POST', '/messages', {
      device: phone,
      receiver,
      type: 'chat',
      params: { text: 'while suspended' },
    });
    expect(refused.body).toEqual({ code: 403, status: 403, message: 'Device suspended' });

    await resume();
    for (const id of ids) {
      await waitFor(
        () => status(id),
        (s) => s === 'delivered',
        { what: `${id} delivered after the resume`, timeoutMs: 15_000 },
      );
    }
    expect(await inbox(receiver)).toEqual(ids);
  }

  it('through the CLI, against the running gateway', async () => {
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
    await gw.close();
    gw = await startGateway({ config: { sendIntervalMs: 60_000 }, build: { dispatch: { maxQueuedMs: 1500 } } });
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
    for (const id of ids.slice(1)) {
      const m = await waitFor(
        async () => (await gw.request('GET', `/messages/${id}`)).body.data,
        (row) => row.status !== 'pending',
        { what: `${id} failed`, timeoutMs: 10_000 },
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
