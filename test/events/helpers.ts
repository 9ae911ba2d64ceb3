// Webhook receivers for tests: real node:http servers on 127.0.0.1 that record
// every request and answer as the test says (a status, or hang), plus the
// signature check a receiver does with the Standard Webhooks library.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { startGateway, type StartOptions, type TestGateway } from '../helpers/gateway.js';
import { sandboxQrText, waitForDevice } from '../helpers/pairing.js';
import { WAIT_TIMEOUT_MS, waitFor } from '../helpers/wait.js';

export interface Received {
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
  /** Epoch ms when the request was complete. */
  readonly at: number;
}

/**
 * What to answer to the n-th request (1-based): an HTTP status, 'hang' (never
 * answer), or a promise of a status (answer when it settles: an attempt held in flight).
 */
export type Responder = (request: Received, n: number) => Answer | 'hang' | Promise<Answer>;

/** A status (the body is `ok`, or `receiver says no` for 3xx and up), or a status with the body to answer. */
export type Answer = number | { readonly status: number; readonly body: string };

export interface Receiver {
  readonly url: string;
  readonly port: number;
  readonly received: Received[];
  respond: Responder;
  /** Requests received carrying this event id (`webhook-id`). */
  byId(id: string): Received[];
  /** Bodies parsed, in arrival order. */
  events(): any[];
  close(): Promise<void>;
}

export async function startReceiver(respond: Responder = () => 200, port = 0): Promise<Receiver> {
  const received: Received[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const entry = { headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() };
      received.push(entry);
      const answer = receiver.respond(entry, received.length);
      if (answer === 'hang') return; // the socket stays open until the gateway gives up or the server closes
      void Promise.resolve(answer).then((given) => {
        if (typeof given === 'number') {
          res.writeHead(given, { 'content-type': 'text/plain' });
          res.end(given >= 300 ? 'receiver says no' : 'ok');
          return;
        }
        res.writeHead(given.status, { 'content-type': 'application/json' });
        res.end(given.body);
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const actual = (server.address() as AddressInfo).port;
  const receiver: Receiver = {
    url: `http://127.0.0.1:${actual}/hooks`,
    port: actual,
    received,
    respond,
    byId: (id) => received.filter((r) => r.headers['webhook-id'] === id),
    events: () => received.map((r) => JSON.parse(r.body)),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return receiver;
}

/** What a receiver does: verify the signature with the device's secret; answers the parsed payload. */
export function verified(secret: string, request: Received): any {
  return new Webhook(secret).verify(request.body, request.headers as Record<string, string>);
}

/** Receivers a test file starts as it goes (`start`, as startReceiver), closed together by `closeAll`. */
export function receiverPool(): { start: typeof startReceiver; closeAll(): Promise<void> } {
  const started: Receiver[] = [];
  return {
    start: async (...args) => {
      const receiver = await startReceiver(...args);
      started.push(receiver);
      return receiver;
    },
    closeAll: async () => {
      await Promise.all(started.splice(0).map((receiver) => receiver.close()));
    },
  };
}

/** Creates a device with a webhook URL (set before pairing, so `device.paired` is delivered), paired to `phone`. */
export async function pairedWithWebhook(gw: TestGateway, phone: string, url: string) {
  return pairedWithWebhookSettings(gw, phone, { webhook_url: url });
}

/**
 * Creates a device, sets its webhook (URL plus any of webhook_format, webhook_reply) before pairing,
 * then pairs it to `phone`.
 */
export async function pairedWithWebhookSettings(
  gw: TestGateway,
  phone: string,
  settings: { webhook_url: string; webhook_format?: string; webhook_reply?: boolean },
  create: Record<string, unknown> = {},
) {
  const created = await gw.request('POST', '/devices', { package: 'BUSINESS', name: `hooked ${phone}`, ...create });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const id = created.body.data.id as number;
  const patched = await gw.request('PATCH', `/devices/${id}`, settings);
  expect(patched.status, JSON.stringify(patched.body)).toBe(200);
  const scan = await gw.request('POST', '/sandbox/scan', { qr: await sandboxQrText(gw, id), phone });
  expect(scan.status, JSON.stringify(scan.body)).toBe(200);
  return waitForDevice(gw, id, (d) => d.paired_status === 'PAIRED' && d.connected === true, 'paired and connected');
}

export interface HookedGateway {
  readonly gw: TestGateway;
  readonly hooks: Receiver;
  /** The paired device as GET /devices/{id} shows it. */
  readonly device: any;
}

/**
 * A gateway with a webhook receiver and a device paired to `phone` that delivers to it (`device.paired` included).
 * Unless told otherwise: private URLs allowed, no send pacing, the sandbox with quick deliveries, quick webhooks;
 * `config` adds to those settings, `build` replaces those parts; `listen` makes the gateway listen on 127.0.0.1
 * before the device pairs. Whatever started is closed again if a later step fails.
 */
export async function startHookedGateway(
  phone: string,
  options: StartOptions & { listen?: boolean } = {},
): Promise<HookedGateway> {
  const { listen = false, ...start } = options;
  const hooks = await startReceiver();
  let gw: TestGateway | undefined;
  try {
    gw = await startGateway({
      ...start,
      config: { allowPrivateUrls: true, sendIntervalMs: 0, ...start.config },
      build: start.build ?? { sandbox: { deliveryDelayMs: 5, readDelayMs: 5 }, webhooks: quickWebhooks },
    });
    if (listen) await gw.app.listen({ port: 0, host: '127.0.0.1' });
    const device = await pairedWithWebhook(gw, phone, hooks.url);
    return { gw, hooks, device };
  } catch (error) {
    await gw?.close();
    await hooks.close();
    throw error;
  }
}

/** A sandbox phone sends a text to a device's number. */
/** A sandbox phone writes to a device's number; answers the network's id of the message. */
export async function phoneSends(gw: TestGateway, from: string, to: string, text: string): Promise<string> {
  const sent = await gw.request('POST', `/sandbox/phones/${from}/messages`, { to, text });
  expect(sent.status, JSON.stringify(sent.body)).toBe(200);
  return sent.body.data.message_id as string;
}

/** Sends a chat message from the device's number; answers the message id. */
export async function sendChat(gw: TestGateway, device: string, receiver: string, text = 'hello'): Promise<string> {
  const res = await gw.request('POST', '/messages', { device, receiver, type: 'chat', params: { text } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.data.id as string;
}

/** Waits until the receiver has a request of this event type about this message (or device, when no id). */
export function waitForEvent(
  receiver: Receiver,
  type: string,
  match: (event: any) => boolean = () => true,
  timeoutMs = WAIT_TIMEOUT_MS,
) {
  return waitFor(
    () =>
      receiver.received.find((r) => {
        const event = JSON.parse(r.body);
        return event.type === type && match(event);
      }),
    (found) => found !== undefined,
    { what: `${type} at the receiver`, timeoutMs },
  ) as Promise<Received>;
}

export async function deliveries(gw: TestGateway, deviceId: number, query = ''): Promise<any[]> {
  const res = await gw.request('GET', `/devices/${deviceId}/webhook-deliveries?per_page=100${query}`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.data;
}

/** The events of `type` the device recorded (its `webhook_events` rows), oldest first, as their standard bodies. */
export async function recordedEvents(
  gw: TestGateway,
  deviceId: number,
  type: string,
): Promise<Array<{ type: string; data: Record<string, unknown> }>> {
  const rows = await gw.app.store.db
    .selectFrom('webhook_events')
    .select(['payload'])
    .where('device_id', '=', deviceId)
    .where('type', '=', type)
    .orderBy('id')
    .execute();
  return rows.map((row) => JSON.parse(row.payload) as { type: string; data: Record<string, unknown> });
}

/** Timings that keep tests quick: retries within tens of milliseconds, a fast poll, a short close. */
export const quickWebhooks = {
  retryScheduleMs: [50, 100],
  pollIntervalMs: 50,
  closeGraceMs: 200,
};
