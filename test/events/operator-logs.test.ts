// Issue 10, item 15 (webhooks and media): what an operator finds in the log.
// At info, every failed webhook attempt (status or error, when it is tried
// next) and every refused media fetch; at warn, a receiver that has been
// failing for an hour. Never a secret, a URL (it may carry a token) or
// message content, whatever the receiver answers.
import { Writable } from 'node:stream';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock, type Clock, type Timer } from '../../src/clock.js';
import { noStoreAvailable, startGateway, type TestGateway } from '../helpers/gateway.js';
import { createPairedDevice } from '../helpers/pairing.js';
import { waitFor } from '../helpers/wait.js';
import { fakeLookup } from '../outbound/helpers.js';
import { pairedWithWebhook, sendChat, startReceiver, type Receiver } from './helpers.js';

/** System time, moved forward by the test. */
class OffsetClock implements Clock {
  offset = 0;
  now(): number {
    return Date.now() + this.offset;
  }
  after(ms: number, fn: () => void): Timer {
    return systemClock.after(ms, fn);
  }
}

const URL_TOKEN = 'url-token-must-not-be-logged';
const CONTENT = 'message content must not be logged';

describe.skipIf(noStoreAvailable)('operator logs for webhooks and media', () => {
  let gw: TestGateway;
  let hooks: Receiver;
  let media: Server;
  let mediaPort: number;
  const lines: any[] = [];
  const raw: string[] = [];
  const clock = new OffsetClock();

  beforeAll(async () => {
    hooks = await startReceiver(() => 500);
    media = createServer((_req, res) => res.writeHead(200, { 'content-type': 'image/png' }).end('not an image'));
    await new Promise<void>((resolve) => media.listen(0, '127.0.0.1', resolve));
    mediaPort = (media.address() as AddressInfo).port;
    const stream = new Writable({
      write(chunk, _encoding, done) {
        for (const line of String(chunk).split('\n').filter(Boolean)) {
          raw.push(line);
          lines.push(JSON.parse(line));
        }
        done();
      },
    });
    gw = await startGateway({
      clock,
      config: { allowPrivateUrls: false, allowedPrivateHosts: ['hooks.lan', 'media.lan'], sendIntervalMs: 0 },
      build: {
        logger: { level: 'info', stream },
        outboundLookup: fakeLookup({ 'hooks.lan': '127.0.0.1', 'media.lan': '127.0.0.1' }),
        sandbox: { deliveryDelayMs: 5, readDelayMs: 5 },
        webhooks: { retryScheduleMs: [50], pollIntervalMs: 50, closeGraceMs: 200 },
      },
    });
  });
  afterAll(async () => {
    await gw?.close();
    await hooks?.close();
    await new Promise((resolve) => media?.close(resolve));
  });

  const logged = (msg: string) => lines.filter((line) => line.msg === msg);

  it('logs failed webhook attempts at info, and a receiver failing for an hour at warn', async () => {
    // The receiver answers 500 with a body ("receiver says no"): its words stay out of the log.
    const url = `http://hooks.lan:${hooks.port}/hooks?token=${URL_TOKEN}`;
    const device = await pairedWithWebhook(gw, '6287800000001', url);
    await sendChat(gw, device.phone, '6287899990001', CONTENT);
    const failed = await waitFor(
      () => logged('webhook attempt failed'),
      (found) => found.length >= 3,
      { what: 'failed attempts in the log' },
    );
    expect(failed[0]).toMatchObject({ level: 30, deviceId: device.id, status: 500, attempts: 1 });
    expect(failed[0].eventId).toMatch(/^evt_/);
    expect(Date.parse(failed[0].retry_at)).toBeGreaterThan(0);
    await waitFor(
      () => logged('webhook receiver keeps failing; its deliveries wait until the pause ends'),
      (found) => found.length >= 1,
      { what: 'the receiver paused' },
    );

    // An hour later it still fails: one warning.
    clock.offset += 60 * 60_000 + 1000;
    const warned = await waitFor(
      () => logged('webhook receiver failing for an hour or more'),
      (found) => found.length >= 1,
      { what: 'the hour warning', timeoutMs: 10_000 },
    );
    expect(warned[0]).toMatchObject({ level: 40, deviceId: device.id, status: 500 });
    expect(Date.parse(warned[0].failing_since)).toBeLessThan(clock.now() - 60 * 60_000);
  });

  it('logs a receiver refusing connections with the error, not a status', async () => {
    const closed = await startReceiver();
    const port = closed.port;
    await closed.close();
    const device = await pairedWithWebhook(gw, '6287800000002', `http://hooks.lan:${port}/hooks`);
    const failed = await waitFor(
      () => logged('webhook attempt failed').filter((line) => line.deviceId === device.id),
      (found) => found.length >= 1,
      { what: 'a refused attempt in the log' },
    );
    expect(failed[0]).toMatchObject({ level: 30, error: 'connection refused' });
    expect(failed[0]).not.toHaveProperty('status');
  });

  it('logs refused media fetches at info with the reason, never the URL', async () => {
    const { phone } = await createPairedDevice(gw, '6287800000003');
    const send = (url: string) =>
      gw.request('POST', '/messages', {
        device: phone,
        receiver: '6287899990003',
        type: 'image',
        params: { image: { url } },
      });
    expect((await send(`http://127.0.0.1:${mediaPort}/a.png?sig=${URL_TOKEN}`)).status).toBe(400);
    expect((await send(`http://media.lan:${mediaPort}/a.png?sig=${URL_TOKEN}`)).status).toBe(400);
    const refused = await waitFor(
      () => logged('media fetch refused'),
      (found) => found.length >= 2,
      { what: 'media refusals in the log' },
    );
    expect(refused[0]).toMatchObject({ level: 30, kind: 'image', reason: 'blocked_address' });
    expect(refused[1]).toMatchObject({ level: 30, kind: 'image', reason: 'unsupported_format' });
  });

  it('never writes a secret, a URL or message content', async () => {
    const secrets = (await gw.request('GET', '/devices?per_page=100')).body.data.map((d: any) => d.webhook_secret);
    const text = raw.join('\n');
    expect(text.length).toBeGreaterThan(0);
    for (const forbidden of [URL_TOKEN, CONTENT, 'receiver says no', ...secrets]) {
      expect(text).not.toContain(forbidden);
    }
  });
});
