// GET /events, GET /events/stream (SSE) and GET /events/ws (WebSocket) against a listening gateway
// (docs/events.md; DECISIONS 17): pages and filters, refusals in the envelope before any event, replay then live,
// resume with no gap and no repeat.
import net, { type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { devicesRepository } from '../../src/devices/repository.js';
import { recordEvent, type EventDevice } from '../../src/events/record.js';
import { noStoreAvailable, startGateway, storeKind, TEST_TOKEN, type TestGateway } from '../helpers/gateway.js';
import { waitFor } from '../helpers/wait.js';
import { closeClients, openSse, openWs, recordMany, settledHead } from './log-helpers.js';

const unauthorized = { code: 401, status: 401, message: 'Unauthorized' };

describe.skipIf(noStoreAvailable)(`event log routes (${storeKind})`, () => {
  let gw: TestGateway;
  let base: string;
  let one: EventDevice;
  let two: EventDevice;
  let otherToken: string;
  let otherDevice: number;
  beforeAll(async () => {
    gw = await startGateway({ build: { eventLog: { pollMs: 50 } } });
    await gw.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(gw.app.server.address() as AddressInfo).port}`;
    const a = await gw.request('POST', '/devices', { package: 'BETA', name: 'one', phone: '6281566000001' });
    const b = await gw.request('POST', '/devices', { package: 'BETA', name: 'two' });
    expect(a.status, JSON.stringify(a.body)).toBe(201);
    one = (await devicesRepository.findById(gw.app.store.db, a.body.data.id))!;
    two = (await devicesRepository.findById(gw.app.store.db, b.body.data.id))!;
    const other = await gw.app.services.accounts.createAccount('events-other');
    otherToken = (await gw.app.services.accounts.createToken(other.id, 't')).token;
    otherDevice = (await gw.request('POST', '/devices', { package: 'BETA', name: 'theirs' }, otherToken)).body.data.id;
  });
  afterAll(async () => {
    closeClients();
    await gw?.close();
  });

  const db = () => gw.app.store.db;
  const head = (): Promise<string | null> => settledHead(db());
  const ring = () => gw.app.services.eventLog.signal.ring();

  describe('GET /events', () => {
    it('pages oldest first with next_cursor; each item is the standard body plus its cursor', async () => {
      const start = await head();
      const ids = [
        ...(await recordMany(db(), one, 3, (i) => ({ i }))),
        ...(await recordMany(db(), two, 2, (i) => ({ i: i + 3 }))),
      ];
      await head();
      const seen: any[] = [];
      let after = start;
      for (let pages = 0; pages < 10; pages++) {
        const res = await gw.request('GET', `/events?limit=2${after === null ? '' : `&after=${after}`}`);
        expect(res.status, JSON.stringify(res.body)).toBe(200);
        seen.push(...res.body.data);
        if (res.body.next_cursor === null) break;
        expect(res.body.data).toHaveLength(2);
        expect(res.body.next_cursor).toBe(res.body.data[1].cursor);
        after = res.body.next_cursor;
      }
      expect(seen.map((e) => e.id)).toEqual(ids);
      expect(Object.keys(seen[0]).sort()).toEqual(['created_at', 'cursor', 'data', 'device', 'id', 'type']);
      expect(seen[0]).toMatchObject({ type: 'message.sent', device: { id: one.id }, data: { i: 0 } });
      expect(seen[0].cursor).toMatch(/^[0-9a-f]{32}$/);
    });

    it('filters by device (id or phone) and by types', async () => {
      const start = await head();
      await recordMany(db(), one, 2, () => ({}));
      await recordMany(db(), two, 1, () => ({}));
      await head();
      const q = (query: string) => gw.request('GET', `/events?after=${start}&${query}`);
      expect((await q(`device=${one.id}`)).body.data).toHaveLength(2);
      expect((await q('device=6281566000001')).body.data).toHaveLength(2);
      expect((await q(`device=${two.id}`)).body.data).toHaveLength(1);
      expect((await q('types=message.sent')).body.data).toHaveLength(3);
      expect((await q('types=message.read,device.paired')).body.data).toHaveLength(0);
      expect((await q(`types=message.read,message.sent&device=${two.id}`)).body.data).toHaveLength(1);
    });

    it('refuses an unknown type, a malformed cursor or limit (400), another account’s device (404), no token (401)', async () => {
      const unknown = await gw.request('GET', '/events?types=message.sent,message.bogus');
      expect(unknown.status).toBe(400);
      expect(unknown.body.message).toBe('Validation failed');
      expect(unknown.body.errors.types[0]).toContain('message.bogus');
      const badCursor = await gw.request('GET', '/events?after=zzz');
      expect(badCursor.status).toBe(400);
      expect(badCursor.body.message).toBe('Validation failed');
      expect(badCursor.body.errors).toHaveProperty('after');
      expect((await gw.request('GET', '/events?limit=0')).status).toBe(400);
      expect((await gw.request('GET', '/events?limit=501')).status).toBe(400);
      expect((await gw.request('GET', '/events?limit=500')).status).toBe(200);
      const theirs = await gw.request('GET', `/events?device=${otherDevice}`);
      expect(theirs.status).toBe(404);
      expect(theirs.body).toEqual({ code: 404, status: 404, message: 'Device not found' });
      expect((await gw.request('GET', '/events?device=999999')).status).toBe(404);
      const none = await gw.request('GET', '/events', undefined, null);
      expect(none.status).toBe(401);
      expect(none.body).toEqual(unauthorized);
      // The other account sees none of this account's events.
      const mine = await gw.request('GET', '/events?limit=500', undefined, otherToken);
      expect(mine.status).toBe(200);
      expect(mine.body.data).toEqual([]);
    });
  });

  describe('GET /events/stream', () => {
    it('refuses a bad token with 401 in the envelope, an unknown type with 400, before any event', async () => {
      const noToken = await openSse(`${base}/events/stream`, {});
      await waitFor(
        () => noToken.ended,
        (e) => e,
        { what: 'the refusal' },
      );
      expect(noToken.status).toBe(401);
      expect(JSON.parse(noToken.body)).toEqual(unauthorized);
      const bad = await openSse(`${base}/events/stream`, { authorization: 'Bearer mgw_nope' });
      await waitFor(
        () => bad.ended,
        (e) => e,
        { what: 'the refusal' },
      );
      expect(bad.status).toBe(401);
      expect(bad.frames).toEqual([]);
      const type = await openSse(`${base}/events/stream?types=nope`, { authorization: `Bearer ${TEST_TOKEN}` });
      await waitFor(
        () => type.ended,
        (e) => e,
        { what: 'the refusal' },
      );
      expect(type.status).toBe(400);
      expect(JSON.parse(type.body).message).toBe('Validation failed');
    });

    it('replays after `after=`, follows live, and resumes after Last-Event-ID with no gap and no repeat', async () => {
      const start = await head();
      const first = await recordMany(db(), one, 5, (i) => ({ i }));
      const auth = { authorization: `Bearer ${TEST_TOKEN}` };
      const sse = await openSse(`${base}/events/stream?after=${start}&device=${one.id}`, auth);
      expect(sse.status).toBe(200);
      expect(sse.headers['content-type']).toContain('text/event-stream');
      await waitFor(
        () => sse.frames.length,
        (n) => n >= 5,
        { what: 'the replay' },
      );
      const live = await recordMany(db(), one, 3, (i) => ({ i: i + 5 }));
      await recordMany(db(), two, 2, () => ({ other: true }));
      ring();
      await waitFor(
        () => sse.frames.length,
        (n) => n >= 8,
        { what: 'the live events' },
      );
      expect(sse.frames.map((f) => JSON.parse(f.data!).id)).toEqual([...first, ...live]);
      expect(sse.frames[0]!.event).toBe('message.sent');
      const resumeAt = sse.frames[5]!.id!;
      sse.close();

      const later = await recordMany(db(), one, 2, (i) => ({ i: i + 8 }));
      // Last-Event-ID wins over after= (a browser's EventSource reconnects with the URL it started with).
      const again = await openSse(`${base}/events/stream?after=${start}&device=${one.id}`, {
        ...auth,
        'last-event-id': resumeAt,
      });
      await waitFor(
        () => again.frames.length,
        (n) => n >= 4,
        { what: 'the resumed stream' },
      );
      await new Promise((resolve) => setTimeout(resolve, 100));
      // After the sixth event (live[0]): the rest of the live ones, then those recorded while away; each once.
      expect(again.frames.map((f) => JSON.parse(f.data!).id)).toEqual([live[1], live[2], ...later]);
      expect(again.frames.slice(0, 2).map((f) => f.id)).toEqual(sse.frames.slice(6).map((f) => f.id));
      again.close();
    });

    it('without a cursor starts from now on; types filter', async () => {
      await recordMany(db(), one, 2, () => ({ old: true }));
      const sse = await openSse(`${base}/events/stream?types=message.read`, { authorization: `Bearer ${TEST_TOKEN}` });
      expect(sse.status).toBe(200);
      await recordMany(db(), one, 2, () => ({ new: true }));
      // A read event recorded now is the only one that passes the filter.
      const id = await recordEvent(db(), one, 'message.read', { now: true }, Date.now());
      ring();
      await waitFor(
        () => sse.frames.length,
        (n) => n >= 1,
        { what: 'the read event' },
      );
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(sse.frames.map((f) => JSON.parse(f.data!).id)).toEqual([id]);
      expect(sse.frames[0]!.event).toBe('message.read');
      sse.close();
    });
  });

  describe('GET /events/ws', () => {
    const wsBase = () => base.replace('http:', 'ws:');

    it('refuses a bad token with 401 in the envelope before the upgrade; 400 and 404 likewise', async () => {
      const refused = await openWs(`${wsBase()}/events/ws`, { protocols: ['bearer.mgw_nope'] }).catch((e) => e);
      expect(refused.status).toBe(401);
      expect(JSON.parse(refused.body)).toEqual(unauthorized);
      const none = await openWs(`${wsBase()}/events/ws`, {}).catch((e) => e);
      expect(none.status).toBe(401);
      const type = await openWs(`${wsBase()}/events/ws?types=bogus`, { protocols: [`bearer.${TEST_TOKEN}`] }).catch(
        (e) => e,
      );
      expect(type.status).toBe(400);
      expect(JSON.parse(type.body).message).toBe('Validation failed');
      const theirs = await openWs(`${wsBase()}/events/ws?device=${otherDevice}`, {
        headers: { authorization: `Bearer ${TEST_TOKEN}` },
      }).catch((e) => e);
      expect(theirs.status).toBe(404);
      expect(JSON.parse(theirs.body).message).toBe('Device not found');
    });

    it('ends the socket of a refused upgrade itself (a client keeping it open cannot hold the shutdown)', async () => {
      const socket = net.connect(Number(new URL(base).port), '127.0.0.1');
      let got = '';
      let closed = false;
      socket.on('data', (chunk) => (got += chunk));
      socket.on('close', () => (closed = true));
      socket.write(
        'GET /events/ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n' +
          'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n',
      );
      await waitFor(
        () => closed,
        (c) => c,
        { what: 'the gateway to end the refused socket' },
      );
      expect(got.split('\r\n')[0]).toBe('HTTP/1.1 401 Unauthorized');
      expect(got).toContain('"message":"Unauthorized"');
    });

    it('takes the token as subprotocol (selected in the answer) or header; replays, follows, resumes', async () => {
      const start = await head();
      const first = await recordMany(db(), two, 4, (i) => ({ i }));
      const ws = await openWs(`${wsBase()}/events/ws?after=${start}&device=${two.id}`, {
        protocols: [`bearer.${TEST_TOKEN}`],
      });
      expect(ws.socket.protocol).toBe(`bearer.${TEST_TOKEN}`);
      await waitFor(
        () => ws.frames.length,
        (n) => n >= 4,
        { what: 'the replay' },
      );
      const live = await recordMany(db(), two, 2, (i) => ({ i: i + 4 }));
      ring();
      await waitFor(
        () => ws.frames.length,
        (n) => n >= 6,
        { what: 'live events' },
      );
      expect(ws.frames.map((f) => f.event.id)).toEqual([...first, ...live]);
      expect(Object.keys(ws.frames[0]!).sort()).toEqual(['cursor', 'event']);
      const resumeAt = ws.frames[2]!.cursor;
      ws.socket.close();

      const byHeader = await openWs(`${wsBase()}/events/ws?after=${resumeAt}&device=${two.id}`, {
        headers: { authorization: `Bearer ${TEST_TOKEN}` },
      });
      expect(byHeader.socket.protocol).toBe('');
      await waitFor(
        () => byHeader.frames.length,
        (n) => n >= 3,
        { what: 'the resumed stream' },
      );
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(byHeader.frames.map((f) => f.event.id)).toEqual([...first.slice(3), ...live]);
      byHeader.socket.close();
    });
  });
});
