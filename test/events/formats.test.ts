// docs/internals.md, Whatspie compatibility: the webhook format per device. PATCH /devices/{id} sets and validates it; receivers of
// each format get exactly its bodies (and only the event types it carries), signed with Standard
// Webhooks headers and retried like any delivery; a delivery whose format changed to one without a
// body for its type ends `skipped`.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { noStoreAvailable, startGateway, type TestGateway } from '../helpers/gateway.js';
import { waitFor } from '../helpers/wait.js';
import {
  deliveries,
  pairedWithWebhookSettings,
  phoneSends,
  quickWebhooks,
  sendChat,
  receiverPool,
  verified,
} from './helpers.js';

const FRIEND = '6287799990021';

describe.skipIf(noStoreAvailable)('webhook formats', () => {
  let gw: TestGateway;
  const receivers = receiverPool();
  const receiver = receivers.start;
  let n = 0;
  const nextPhone = () => `62877000002${String(++n).padStart(2, '0')}`;
  beforeAll(async () => {
    gw = await startGateway({
      config: { allowPrivateUrls: true, sendIntervalMs: 0 },
      build: { sandbox: { deliveryDelayMs: 5, readDelayMs: 5 }, webhooks: quickWebhooks },
    });
  });
  afterAll(async () => {
    await gw?.close();
    await receivers.closeAll();
  });

  const incomingFrom = async (device: string, sender: string) =>
    waitFor(
      async () =>
        ((await gw.request('GET', `/messages?direction=incoming&device=${device}`)).body.data as any[]).filter(
          (m) => m.sender === sender,
        ),
      (list) => list.length >= 1,
      { what: 'the incoming message stored' },
    );

  it('PATCH sets webhook_format and webhook_reply, the device object shows them; bad values are refused by name', async () => {
    const created = await gw.request('POST', '/devices', { package: 'BETA', name: 'formats' });
    const id = created.body.data.id;
    expect(created.body.data.webhook_format).toBe('standard');
    expect(created.body.data.webhook_reply).toBe(false);

    const bad = await gw.request('PATCH', `/devices/${id}`, { webhook_format: 'whatspie_v3' });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({
      code: 400,
      message: 'Validation failed',
      errors: { webhook_format: ['must be one of: standard, whatspie_v1, whatspie_v2'] },
    });
    for (const value of [1, null, ''] as const) {
      const res = await gw.request('PATCH', `/devices/${id}`, { webhook_format: value });
      expect(res.status, JSON.stringify(value)).toBe(400);
      expect(res.body.message).toBe('Validation failed');
      expect(Object.keys(res.body.errors)).toEqual(['webhook_format']);
    }
    const notBoolean = await gw.request('PATCH', `/devices/${id}`, { webhook_reply: 'yes' });
    expect(notBoolean.status).toBe(400);
    expect(notBoolean.body.errors).toEqual({ webhook_reply: ['must be a boolean'] });
    // Nothing changed by the refused requests.
    expect((await gw.request('GET', `/devices/${id}`)).body.data).toMatchObject({
      webhook_format: 'standard',
      webhook_reply: false,
    });

    for (const format of ['whatspie_v1', 'whatspie_v2', 'standard']) {
      const res = await gw.request('PATCH', `/devices/${id}`, { webhook_format: format, webhook_reply: true });
      expect(res.status).toBe(200);
      expect(res.body.data).toMatchObject({ webhook_format: format, webhook_reply: true });
      expect((await gw.request('GET', `/devices/${id}`)).body.data.webhook_format).toBe(format);
    }
    const off = await gw.request('PATCH', `/devices/${id}`, { webhook_reply: false });
    expect(off.body.data).toMatchObject({ webhook_format: 'standard', webhook_reply: false });
  });

  it('whatspie_v1: an incoming text arrives as the flat body, signed, retried after a 500; nothing else is delivered', async () => {
    const hooks = await receiver((_request, count) => (count === 1 ? 500 : 200));
    const phone = nextPhone();
    const device = await pairedWithWebhookSettings(gw, phone, {
      webhook_url: hooks.url,
      webhook_format: 'whatspie_v1',
    });

    await phoneSends(gw, FRIEND, phone, 'Hello, I need help with my order');
    const [message] = await incomingFrom(phone, FRIEND);
    await waitFor(
      () => hooks.received.length,
      (count) => count === 2,
      { what: 'the failed attempt and its retry' },
    );
    const expected = {
      message: 'Hello, I need help with my order',
      from: FRIEND,
      timestamp: Math.floor(Date.parse(message.sent_at) / 1000),
      message_id: message.id,
      from_user: { name: FRIEND, jid: `${FRIEND}@s.whatsapp.net` },
    };
    // Both attempts carry the same body under the same webhook-id, each signed afresh with the device's secret.
    const [first, second] = hooks.received;
    expect(first!.headers['webhook-id']).toBe(second!.headers['webhook-id']);
    expect(first!.body).toBe(second!.body);
    for (const request of hooks.received) {
      expect(request.headers['content-type']).toBe('application/json');
      expect(verified(device.webhook_secret, request)).toEqual(expected);
    }
    expect(JSON.parse(second!.body)).toEqual(expected);

    // Outgoing messages make no events for this device: sent, delivered and read are not recorded.
    const id = await sendChat(gw, phone, FRIEND, 'we are on it');
    await waitFor(
      async () => (await gw.request('GET', `/messages/${id}`)).body.data.status,
      (status) => status === 'delivered',
      { what: 'the reply delivered' },
    );
    const log = await waitFor(
      () => deliveries(gw, device.id),
      (list) => list.length === 1 && list[0].status === 'delivered',
      { what: 'one delivery, delivered' },
    );
    expect(log[0]).toMatchObject({ type: 'message.incoming', format: 'whatspie_v1', payload: expected });
    expect(log[0].attempts.map((a: any) => [a.http_status, a.format, a.reply])).toEqual([
      [500, 'whatspie_v1', null],
      [200, 'whatspie_v1', { ignored: 'the answer is not JSON', replies: [] }],
    ]);
    expect(hooks.received).toHaveLength(2);
  });

  it('whatspie_v2: message_incoming, message_read, message_failed and device_disconnected, and nothing else', async () => {
    const hooks = await receiver();
    const phone = nextPhone();
    const device = await pairedWithWebhookSettings(gw, phone, {
      webhook_url: hooks.url,
      webhook_format: 'whatspie_v2',
    });
    const secret = device.webhook_secret as string;
    const bodies = () => hooks.received.map((request) => verified(secret, request));
    const ofType = (type: string) =>
      waitFor(
        () => bodies().filter((body) => body.type === type),
        (list) => list.length === 1,
        { what: `${type} at the receiver` },
      ).then((list) => list[0]);

    await phoneSends(gw, FRIEND, phone, 'v2 hello');
    const [message] = await incomingFrom(phone, FRIEND);
    expect(await ofType('message_incoming')).toEqual({
      type: 'message_incoming',
      data: {
        message: 'v2 hello',
        from: FRIEND,
        timestamp: Math.floor(Date.parse(message.sent_at) / 1000),
        message_id: message.id,
        from_user: { name: FRIEND, jid: `${FRIEND}@s.whatsapp.net` },
      },
    });

    const readId = await sendChat(gw, phone, FRIEND, 'please read me');
    await waitFor(
      async () => (await gw.request('GET', `/messages/${readId}`)).body.data.status,
      (status) => status === 'delivered',
      { what: 'delivered before it is read' },
    );
    expect((await gw.request('POST', `/sandbox/phones/${FRIEND}/read`, { message_id: readId })).status).toBe(200);
    const read = await ofType('message_read');
    const readAt = (await gw.request('GET', `/messages/${readId}`)).body.data.read_at;
    expect(read).toEqual({ type: 'message_read', data: { message_id: readId, read_at: readAt } });

    const failedId = await sendChat(gw, phone, '6287799990000', 'nobody is there');
    const failed = await ofType('message_failed');
    const reason = (await gw.request('GET', `/messages/${failedId}`)).body.data.failed_reason;
    expect(reason).toEqual(expect.any(String));
    expect(failed).toEqual({ type: 'message_failed', data: { message_id: failedId, status: 'ERROR', reason } });

    const logout = await gw.request('POST', `/sandbox/devices/${device.id}/disconnect`, { logout: true });
    expect(logout.status, JSON.stringify(logout.body)).toBe(200);
    const gone = await ofType('device_disconnected');
    expect(gone).toEqual({
      type: 'device_disconnected',
      data: { device_id: device.id, status: 'UNPAIRED', reason: expect.any(String) },
    });

    // The sent and delivered events of both messages were never recorded.
    const log = await deliveries(gw, device.id);
    expect(log.map((d) => d.type).sort()).toEqual(
      ['device.disconnected', 'message.failed', 'message.incoming', 'message.read'].sort(),
    );
    expect(
      bodies()
        .map((body) => body.type)
        .sort(),
    ).toEqual(['device_disconnected', 'message_failed', 'message_incoming', 'message_read'].sort());
  });

  it('a delivery waiting when the format changes to one without its type ends skipped, unsent', async () => {
    // Standard bodies are refused, so what was recorded as standard can only wait, then end skipped.
    const isStandard = (body: string) => 'created_at' in JSON.parse(body);
    const hooks = await receiver((request) => (isStandard(request.body) ? 503 : 200));
    const phone = nextPhone();
    const device = await pairedWithWebhookSettings(gw, phone, { webhook_url: hooks.url });
    const id = await sendChat(gw, phone, FRIEND, 'recorded as standard');
    await waitFor(
      () => deliveries(gw, device.id, '&type=message.sent'),
      (list) => list.length === 1 && list[0].attempts.length >= 1,
      { what: 'message.sent tried and failed' },
    );
    const patched = await gw.request('PATCH', `/devices/${device.id}`, { webhook_format: 'whatspie_v1' });
    expect(patched.status).toBe(200);
    const [sent] = await waitFor(
      () => deliveries(gw, device.id, '&type=message.sent'),
      (list) => list[0]?.status === 'skipped',
      { what: 'message.sent skipped' },
    );
    expect(sent.payload.data.id).toBe(id);
    expect(sent.format).toBe('whatspie_v1');
    expect(sent.attempts.at(-1)).toEqual({
      attempted_at: expect.any(String),
      url: null,
      http_status: null,
      latency_ms: 0,
      error: 'skipped: the whatspie_v1 webhook format has no body for message.sent',
      format: 'whatspie_v1',
      reply: null,
    });
    expect(sent.attempts.slice(0, -1).every((a: any) => a.http_status === 503 && a.format === 'standard')).toBe(true);
    // Only standard bodies were ever sent for it: the skipped delivery was not written in v1.
    for (const request of hooks.byId(sent.id)) expect(isStandard(request.body)).toBe(true);
  });
});
