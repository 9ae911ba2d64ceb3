// The event streams under load and misuse (docs/events.md; DECISIONS 17): 100 SSE and 100 WebSocket consumers at
// once each see every event; a consumer that stops reading is closed (after `stallMs` on the injected clock) with
// what the gateway holds for it bounded, and resumes by its cursor with nothing lost; heartbeats every 15 s.
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/clock.js';
import { devicesRepository } from '../../src/devices/repository.js';
import type { EventDevice } from '../../src/events/record.js';
import { CHUNK_BYTES, SHUTDOWN_REASON, SLOW_CONSUMER_REASON } from '../../src/events/log-streams.js';
import { noStoreAvailable, startGateway, storeKind, TEST_TOKEN, type TestGateway } from '../helpers/gateway.js';
import { waitFor } from '../helpers/wait.js';
import {
  closeClients,
  openSse,
  openWs,
  recordMany,
  settledHead,
  type SseClient,
  type WsClient,
} from './log-helpers.js';

const auth = { authorization: `Bearer ${TEST_TOKEN}` };

async function listening(gw: TestGateway): Promise<string> {
  await gw.app.listen({ port: 0, host: '127.0.0.1' });
  return `http://127.0.0.1:${(gw.app.server.address() as AddressInfo).port}`;
}

async function deviceOf(gw: TestGateway, name: string): Promise<EventDevice> {
  const created = await gw.request('POST', '/devices', { package: 'BETA', name });
  return (await devicesRepository.findById(gw.app.store.db, created.body.data.id))!;
}

describe.skipIf(noStoreAvailable)(`event streams at scale (${storeKind})`, () => {
  let gw: TestGateway;
  let base: string;
  beforeAll(async () => {
    gw = await startGateway({ build: { eventLog: { pollMs: 200 } } });
    base = await listening(gw);
  });
  afterAll(async () => {
    closeClients();
    await gw?.close();
  });

  it('100 SSE and 100 WebSocket consumers at once each see every event, in order, once', async () => {
    const device = await deviceOf(gw, 'fan-out');
    const sse: SseClient[] = [];
    const ws: WsClient[] = [];
    const url = `/events/stream?device=${device.id}`;
    for (let i = 0; i < 100; i++) {
      sse.push(await openSse(`${base}${url}`, auth));
      ws.push(
        await openWs(`${base.replace('http', 'ws')}/events/ws?device=${device.id}`, {
          protocols: [`bearer.${TEST_TOKEN}`],
        }),
      );
    }
    expect(sse.every((c) => c.status === 200)).toBe(true);
    const ids: string[] = [];
    for (let batch = 0; batch < 10; batch++) {
      ids.push(...(await recordMany(gw.app.store.db, device, 20, (i) => ({ batch, i }))));
      gw.app.services.eventLog.signal.ring();
    }
    await waitFor(
      () => Math.min(...sse.map((c) => c.frames.length), ...ws.map((c) => c.frames.length)),
      (n) => n >= 200,
      { what: 'every consumer to have 200 events', timeoutMs: 30_000, intervalMs: 50 },
    );
    await new Promise((resolve) => setTimeout(resolve, 200));
    for (const client of sse) expect(client.frames.map((f) => JSON.parse(f.data!).id)).toEqual(ids);
    for (const client of ws) expect(client.frames.map((f) => f.event.id)).toEqual(ids);
    expect(gw.app.services.eventLog.streams.size).toBe(200);
    closeClients();
    await waitFor(
      () => gw.app.services.eventLog.streams.size,
      (n) => n === 0,
      { what: 'every consumer let go' },
    );
  }, 60_000);
});

describe.skipIf(noStoreAvailable)(`slow consumers and heartbeats (${storeKind})`, () => {
  const clock = new FakeClock(Date.now());
  const highWaterBytes = 64 * 1024;
  let gw: TestGateway;
  let base: string;
  beforeAll(async () => {
    gw = await startGateway({ clock, build: { eventLog: { pollMs: 1_000, streams: { highWaterBytes } } } });
    base = await listening(gw);
  });
  afterAll(async () => {
    closeClients();
    await gw?.close();
  });
  const streams = () => gw.app.services.eventLog.streams;

  it('a `:` comment every 15 s on the injected clock (SSE), a ping (WebSocket)', async () => {
    const sse = await openSse(`${base}/events/stream`, auth);
    const ws = await openWs(`${base.replace('http', 'ws')}/events/ws`, { protocols: [`bearer.${TEST_TOKEN}`] });
    let pings = 0;
    ws.socket.on('ping', () => (pings += 1));
    expect(sse.comments).toEqual(['following']);
    clock.advance(14_999);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(sse.comments).toEqual(['following']);
    expect(pings).toBe(0);
    clock.advance(1);
    await waitFor(
      () => sse.comments.length + pings,
      (n) => n >= 3,
      { what: 'the first heartbeats' },
    );
    expect(sse.comments).toEqual(['following', 'heartbeat']);
    clock.advance(15_000);
    await waitFor(
      () => pings,
      (n) => n >= 2,
      { what: 'the second ping' },
    );
    expect(sse.comments).toEqual(['following', 'heartbeat', 'heartbeat']);
    sse.close();
    ws.socket.terminate();
  });

  it('an SSE consumer that stops reading is closed, holds at most the bound, and resumes with nothing lost', async () => {
    const device = await deviceOf(gw, 'slow sse');
    const start = (await settledHead(gw.app.store.db)) ?? '0'.repeat(32);
    const sse = await openSse(`${base}/events/stream?device=${device.id}&after=${start}`, auth);
    sse.pause();
    // 12 MB of events: far more than the sockets' own buffers take.
    const big = 'x'.repeat(30_000);
    const ids = await recordMany(gw.app.store.db, device, 400, (i) => ({ i, big }));
    gw.app.services.eventLog.signal.ring();
    // Rung again while waiting: on PostgreSQL a read can be held a moment behind another test's open transaction,
    // which the head poll (not run here: this gateway's clock stands still) would find.
    const ring = () => gw.app.services.eventLog.signal.ring();
    await waitFor(
      () => (ring(), streams().bufferedNow),
      (n) => n > highWaterBytes,
      { what: 'the stream to reach its bound', timeoutMs: 15_000 },
    );
    // Held there: no more is written while the consumer takes nothing.
    expect(streams().peakBuffered).toBeLessThanOrEqual(highWaterBytes + CHUNK_BYTES + 31_000 + 200);
    // Its stall time passes (moved until the stall is seen: the stream may still be reading when first moved); the
    // polite close cannot reach a consumer that reads nothing, so it is cut after the grace (1 s of the clock).
    await waitFor(
      () => {
        clock.advance(30_000);
        clock.advance(1_000);
        return streams().size;
      },
      (n) => n === 0,
      { what: 'the slow consumer closed' },
    );
    expect(streams().peakBuffered).toBeLessThanOrEqual(highWaterBytes + CHUNK_BYTES + 31_000 + 200);
    const metrics = (await gw.request('GET', '/metrics')).body as string;
    expect(metrics).toMatch(/^gateway_event_stream_slow_closed_total [1-9]/m);
    expect(metrics).toMatch(/^gateway_event_stream_consumers 0$/m);
    expect(metrics).toContain(`gateway_event_stream_peak_buffered_bytes ${streams().peakBuffered}`);
    sse.close();
    const taken = sse.frames.filter((f) => f.event !== 'close');
    expect(taken.length).toBeLessThan(400);
    // It resumes after the last event it processed, and gets the rest: no gap, no repeat.
    const last = taken.at(-1)?.id ?? start;
    const again = await openSse(`${base}/events/stream?device=${device.id}`, { ...auth, 'last-event-id': last });
    await waitFor(
      () => (ring(), again.frames.length),
      (n) => taken.length + n >= 400,
      { what: 'the rest', timeoutMs: 15_000 },
    );
    expect([...taken, ...again.frames].map((f) => JSON.parse(f.data!).id)).toEqual(ids);
    again.close();
    await waitFor(
      () => streams().size,
      (n) => n === 0,
      { what: 'the consumer let go' },
    );
  }, 60_000);

  it('a WebSocket consumer that stops reading is closed with 4000 and the reason; resumes by its cursor', async () => {
    const device = await deviceOf(gw, 'slow ws');
    const ws = await openWs(`${base.replace('http', 'ws')}/events/ws?device=${device.id}`, {
      protocols: [`bearer.${TEST_TOKEN}`],
    });
    ws.socket.pause();
    const big = 'y'.repeat(30_000);
    const ids = await recordMany(gw.app.store.db, device, 400, (i) => ({ i, big }));
    gw.app.services.eventLog.signal.ring();
    // Wait until the stream is stuck behind the paused client, then let its stall time pass.
    const ring = () => gw.app.services.eventLog.signal.ring();
    // This consumer's own buffer (the peak since start may be an earlier test's consumer): over the bound and not
    // moving, so its writer waits on the stall timer.
    const stuck = async () => {
      ring();
      const at = streams().bufferedNow;
      await new Promise((resolve) => setTimeout(resolve, 300));
      return streams().bufferedNow === at && at > highWaterBytes;
    };
    await waitFor(stuck, (s) => s, { what: 'the stream held at its bound', timeoutMs: 15_000 });
    // Its stall time passes (moved until the gateway gives up on it), then it reads again and finds the close.
    const slowBefore = streams().closedSlow;
    await waitFor(
      () => {
        // Not moved once it has given up: the grace after the close would cut the connection before it is read.
        if (streams().closedSlow === slowBefore) clock.advance(30_000);
        return streams().closedSlow;
      },
      (n) => n > slowBefore,
      { what: 'the gateway to give up on it' },
    );
    ws.socket.resume();
    await waitFor(
      () => ws.closed,
      (c) => c !== null,
      { what: 'the close', timeoutMs: 10_000 },
    );
    expect(ws.closed).toEqual({ code: 4000, reason: SLOW_CONSUMER_REASON });
    await waitFor(
      () => streams().size,
      (n) => n === 0,
      { what: 'the slow consumer let go' },
    );
    const last = ws.frames.at(-1)!.cursor;
    const again = await openWs(`${base.replace('http', 'ws')}/events/ws?device=${device.id}&after=${last}`, {
      protocols: [`bearer.${TEST_TOKEN}`],
    });
    await waitFor(
      () => (ring(), ws.frames.length + again.frames.length),
      (n) => n >= 400,
      { what: 'the rest', timeoutMs: 15_000 },
    );
    expect([...ws.frames, ...again.frames].map((f) => f.event.id)).toEqual(ids);
    again.socket.terminate();
  }, 60_000);

  it('at shutdown every consumer is told why and closed', async () => {
    const sse = await openSse(`${base}/events/stream`, auth);
    const ws = await openWs(`${base.replace('http', 'ws')}/events/ws`, { protocols: [`bearer.${TEST_TOKEN}`] });
    await gw.app.services.eventLog.streams.closeAll();
    await waitFor(
      () => sse.ended && ws.closed !== null,
      (done) => done,
      { what: 'both closed' },
    );
    expect(sse.frames.at(-1)).toEqual({ event: 'close', data: JSON.stringify({ reason: SHUTDOWN_REASON }) });
    expect(ws.closed).toEqual({ code: 1001, reason: SHUTDOWN_REASON });
    // A consumer arriving after that is closed at once.
    const late = await openSse(`${base}/events/stream`, auth);
    await waitFor(
      () => late.ended,
      (e) => e,
      { what: 'the late consumer closed' },
    );
    expect(late.frames.at(-1)?.event).toBe('close');
  });
});
