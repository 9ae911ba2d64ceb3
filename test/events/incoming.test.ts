// docs/internals.md, Webhooks: messages phones send to our devices are stored (direction
// incoming), listed, looked up, and delivered as `message.incoming`; a message
// the network repeats is stored and announced once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Network } from '../../src/network/network.js';
import { createSandboxNetwork } from '../../src/network/sandbox/index.js';
import { noStoreAvailable, type TestGateway } from '../helpers/gateway.js';
import { createPairedDevice } from '../helpers/pairing.js';
import { waitFor } from '../helpers/wait.js';
import { quickWebhooks, sendChat, startHookedGateway, verified, waitForEvent, type Receiver } from './helpers.js';

const PHONE = '6287700000011';
const FRIEND = '6287799990011';

/** The sandbox, except that every incoming message reaches the gateway twice (as a network may redeliver). */
function repeatingNetwork(): Network {
  const inner = createSandboxNetwork({ deliveryDelayMs: 5, readDelayMs: 5 });
  return {
    description: inner.description,
    sandbox: inner.sandbox,
    close: () => inner.close(),
    connect: (options, onEvent) =>
      inner.connect(options, (event) => {
        onEvent(event);
        if (event.type === 'incoming_message') onEvent(event);
      }),
  };
}

describe.skipIf(noStoreAvailable)('incoming messages', () => {
  let gw: TestGateway;
  let hooks: Receiver;
  let device: any;
  beforeAll(async () => {
    ({ gw, hooks, device } = await startHookedGateway(PHONE, {
      build: { network: repeatingNetwork(), webhooks: quickWebhooks },
    }));
  });
  afterAll(async () => {
    await gw?.close();
    await hooks?.close();
  });

  const incoming = async (query = '') =>
    (await gw.request('GET', `/messages?direction=incoming${query}`)).body.data as any[];

  it('stores a message from a sandbox phone once, lists it, and delivers it as message.incoming once', async () => {
    const sent = await gw.request('POST', `/sandbox/phones/${FRIEND}/messages`, {
      to: PHONE,
      text: 'Hi, is this open?',
    });
    expect(sent.status).toBe(200);
    const request = await waitForEvent(hooks, 'message.incoming');
    const event = verified(device.webhook_secret, request);

    const [message] = await waitFor(
      () => incoming(),
      (list) => list.length >= 1,
      { what: 'listed' },
    );
    expect(message).toEqual({
      id: expect.stringMatching(/^[0-9A-Z]{26}$/),
      status: 'delivered',
      type: 'chat',
      direction: 'incoming',
      device: PHONE,
      receiver: PHONE,
      sender: FRIEND,
      message: 'Hi, is this open?',
      file_url: null,
      params: { text: 'Hi, is this open?' },
      simulate_typing: 0,
      timestamp: expect.any(String),
      sent_at: expect.any(String),
      delivered_at: expect.any(String),
      read_at: null,
      failed_at: null,
      failed_reason: null,
    });
    expect(event.data).toEqual(message);
    expect((await gw.request('GET', `/messages/${message.id}`)).body.data).toEqual(message);

    // The network said it twice; it is stored and announced once.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await incoming()).toHaveLength(1);
    expect(hooks.events().filter((e) => e.type === 'message.incoming')).toHaveLength(1);
  });

  it('keeps incoming and outgoing apart in the list, and filters by device', async () => {
    const out = await sendChat(gw, PHONE, FRIEND, 'an answer');
    await gw.request('POST', `/sandbox/phones/${FRIEND}/messages`, { to: PHONE, text: 'thanks' });
    const list = await waitFor(
      () => incoming(`&device=${PHONE}`),
      (l) => l.length === 2,
      { what: 'two incoming' },
    );
    expect(list.map((m) => m.message)).toEqual(['thanks', 'Hi, is this open?']);
    const outgoing = (await gw.request('GET', '/messages?direction=outgoing')).body.data as any[];
    expect(outgoing.map((m) => m.id)).toContain(out);
    expect(outgoing.every((m) => m.direction === 'outgoing')).toBe(true);
  });

  it('stores messages to a device without a webhook URL, with no event', async () => {
    const quiet = await createPairedDevice(gw, '6287700000012');
    await gw.request('POST', `/sandbox/phones/${FRIEND}/messages`, { to: quiet.phone, text: 'anyone?' });
    const [message] = await waitFor(
      () => incoming(`&device=${quiet.phone}`),
      (l) => l.length === 1,
      { what: 'stored' },
    );
    expect(message).toMatchObject({ direction: 'incoming', device: quiet.phone, sender: FRIEND, message: 'anyone?' });
    const events = await gw.app.store.db
      .selectFrom('webhook_events')
      .select('id')
      .where('device_id', '=', quiet.id)
      .execute();
    expect(events).toHaveLength(0);
  });
});
