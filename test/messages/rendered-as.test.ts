// docs/internals.md, WhatsApp and sandbox accounts: a list or template that the device's connection delivers as
// text (its capabilities say so: WhatsApp by default) carries
// `rendered_as: "text"` once sent, in the API and in its webhook events; a
// message delivered in its own form carries no such field. The OpenAPI
// document shows the field.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Network, NetworkConnection } from '../../src/network/network.js';
import { createSandboxNetwork } from '../../src/network/sandbox/index.js';
import { noStoreAvailable, startGateway, type TestGateway } from '../helpers/gateway.js';
import { createPairedDevice } from '../helpers/pairing.js';
import { waitFor } from '../helpers/wait.js';

/** The sandbox, but its connections deliver lists and templates as text, as WhatsApp's do. */
function renderingAsText(): Network {
  const inner = createSandboxNetwork({ deliveryDelayMs: 5, readDelayMs: 5 });
  const capabilities = { interactive: 'text' } as const;
  const wrap = (connection: NetworkConnection): NetworkConnection =>
    new Proxy(connection, {
      get(target, property) {
        if (property === 'capabilities') return capabilities;
        const value: unknown = Reflect.get(target, property, target);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
  return {
    description: 'sandbox rendering interactive messages as text',
    sandbox: inner.sandbox,
    connect: (options, onEvent) => wrap(inner.connect(options, onEvent)),
    close: () => inner.close(),
  };
}

const LIST = {
  title: 'Menu',
  text: 'Pick one',
  buttonText: 'Open',
  sections: [{ title: 'Food', rows: [{ title: 'Rice', rowId: 'r1' }] }],
};
const TEMPLATE = {
  text: 'Help?',
  templateButtons: [{ index: 1, quickReplyButton: { displayText: 'Agent', id: 'a' } }],
};

async function sendAndWait(gw: TestGateway, device: string, type: string, params: object) {
  const res = await gw.request('POST', '/messages', { device, receiver: '6281599990021', type, params });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  // Accepted, not yet sent: how it will be delivered is not known yet.
  expect(res.body.data).not.toHaveProperty('rendered_as');
  return waitFor(
    async () => (await gw.request('GET', `/messages/${res.body.data.id}`)).body.data,
    (m) => m.status === 'delivered',
    { what: `${type} delivered` },
  );
}

const build = {
  dispatch: { retryBaseMs: 50, retryMaxMs: 200 },
  connections: { reconnectBaseMs: 20, reconnectMaxMs: 100 },
};

describe.skipIf(noStoreAvailable)('rendered_as (docs/internals.md, WhatsApp and sandbox accounts)', () => {
  describe('a connection that delivers lists and templates as text', () => {
    let gw: TestGateway;
    let device: string;
    beforeAll(async () => {
      gw = await startGateway({
        build: { ...build, network: renderingAsText() },
        config: { sendIntervalMs: 0, allowPrivateUrls: true },
      });
      const paired = await createPairedDevice(gw, '6281500000021');
      device = paired.phone;
      // A webhook URL, so status changes are recorded as events (nothing needs to answer there).
      const patched = await gw.request('PATCH', `/devices/${paired.id}`, { webhook_url: 'http://127.0.0.1:9/hook' });
      expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    });
    afterAll(() => gw?.close());

    it.each([
      ['list', LIST],
      ['template', TEMPLATE],
    ])('a %s carries rendered_as "text" once sent, in the API and in its webhook events', async (type, params) => {
      const message = await sendAndWait(gw, device, type, params);
      expect(message.rendered_as).toBe('text');
      const listed = (await gw.request('GET', `/messages?direction=outgoing&limit=50`)).body.data;
      expect(listed.find((m: { id: string }) => m.id === message.id).rendered_as).toBe('text');
      const events = await gw.app.store.db
        .selectFrom('webhook_events')
        .select(['type', 'payload'])
        .where('type', 'in', ['message.sent', 'message.delivered'])
        .execute();
      const own = events.filter((e) => (JSON.parse(e.payload) as { data: { id: string } }).data.id === message.id);
      expect(own.map((e) => e.type).sort()).toEqual(['message.delivered', 'message.sent']);
      for (const event of own) expect(JSON.parse(event.payload).data.rendered_as).toBe('text');
    });

    it('a chat message has no rendered_as', async () => {
      const message = await sendAndWait(gw, device, 'chat', { text: 'plain' });
      expect(message).not.toHaveProperty('rendered_as');
    });
  });

  describe('a connection that delivers them in their own form (the sandbox)', () => {
    let gw: TestGateway;
    beforeAll(async () => {
      gw = await startGateway({
        build: { ...build, sandbox: { deliveryDelayMs: 5, readDelayMs: 5 } },
        config: { sendIntervalMs: 0 },
      });
    });
    afterAll(() => gw?.close());

    it('a list has no rendered_as; the OpenAPI document shows the field', async () => {
      const device = (await createPairedDevice(gw, '6281500000022')).phone;
      const message = await sendAndWait(gw, device, 'list', LIST);
      expect(message).not.toHaveProperty('rendered_as');
      const doc = (await gw.request('GET', '/openapi.json', undefined, null)).body;
      const field = doc.components?.schemas?.Message?.properties?.rendered_as ?? findRenderedAs(doc);
      expect(field).toMatchObject({ type: 'string', enum: ['text'] });
    });
  });
});

/** The `rendered_as` property wherever the document placed the Message schema. */
function findRenderedAs(node: unknown): unknown {
  if (node === null || typeof node !== 'object') return undefined;
  const record = node as Record<string, unknown>;
  const properties = record.properties as Record<string, unknown> | undefined;
  if (properties?.rendered_as !== undefined && properties.failed_reason !== undefined) return properties.rendered_as;
  for (const value of Object.values(record)) {
    const found = findRenderedAs(value);
    if (found !== undefined) return found;
  }
  return undefined;
}
