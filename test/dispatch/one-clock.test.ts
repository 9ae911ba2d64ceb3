// docs/internals.md, Sending: a lane reads one clock, the injected one. A message's due time is written with that
// clock and compared with it; the send interval passes when that clock moves, so a test moves it instead of waiting.
import { afterEach, describe, expect, it } from 'vitest';
import { FakeClock, ManualClock } from '../../src/clock.js';
import { noStoreAvailable, startGateway, type TestGateway } from '../helpers/gateway.js';
import { createPairedDevice } from '../helpers/pairing.js';
import { waitFor } from '../helpers/wait.js';

const build = {
  sandbox: { deliveryDelayMs: 0, readDelayMs: 5 },
  connections: { reconnectBaseMs: 20, reconnectMaxMs: 100 },
};

async function send(gw: TestGateway, device: string, receiver: string, text: string): Promise<string> {
  const res = await gw.request('POST', '/messages', { device, receiver, type: 'chat', params: { text } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.data.id as string;
}

async function statusOf(gw: TestGateway, id: string): Promise<string> {
  return (await gw.request('GET', `/messages/${id}`)).body.data.status as string;
}

function sentOrLater(gw: TestGateway, id: string) {
  return waitFor(
    () => statusOf(gw, id),
    (status) => status === 'sent' || status === 'delivered',
    { what: `message ${id} sent`, timeoutMs: 10_000 },
  );
}

describe.skipIf(noStoreAvailable)('the dispatcher reads one clock', () => {
  let gw: TestGateway | undefined;
  afterEach(async () => {
    await gw?.close();
    gw = undefined;
  });

  it('sends at once a message accepted by a clock an hour ahead of the wall clock', async () => {
    // Before, the lane compared the due time the clock wrote with Date.now(): this message waited an hour.
    gw = await startGateway({ build, clock: new ManualClock(Date.now() + 3_600_000), config: { sendIntervalMs: 0 } });
    const device = await createPairedDevice(gw, '6281700007001');
    const id = await send(gw, device.phone, '6281799997001', 'ahead');
    await sentOrLater(gw, id);
  });

  it('holds the next message for the send interval of the clock, and sends it once the clock has moved on', async () => {
    const clock = new FakeClock(Date.now());
    gw = await startGateway({ build, clock, config: { sendIntervalMs: 60_000 } });
    const device = await createPairedDevice(gw, '6281700007002');
    const first = await send(gw, device.phone, '6281799997002', 'first');
    const second = await send(gw, device.phone, '6281799997002', 'second');
    await sentOrLater(gw, first);
    // The clock has not moved: the second is due a minute of it after the first, however long this test takes.
    expect(await statusOf(gw, second)).toBe('pending');
    clock.advance(59_999);
    expect(await statusOf(gw, second)).toBe('pending');
    clock.advance(1);
    await sentOrLater(gw, second);
  });
});
