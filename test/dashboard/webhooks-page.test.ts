// The account's webhooks page (issue 28, DECISIONS 17) in a real browser: creating a webhook with a device filter,
// an event filter and a custom header (the secret shown once; the receiver gets the header and a signature made with
// that secret), a refused header in the API's words, the deliveries with a retry, disabling, rotating and deleting.
import { createHmac } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import type { TestGateway } from '../helpers/gateway.js';
import { createPairedDevice } from '../helpers/pairing.js';
import { waitFor } from '../helpers/wait.js';
import { copiedText, dashboardSuite, seriousViolations, startReceiver } from './harness.js';

const SHOP = '6281377000711';
const OFFICE = '6281377000712';
const CUSTOMER = '6281377000713';
const WAIT = { timeout: 15_000 };

describe('the account’s webhooks page', () => {
  let gw: TestGateway;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let shopId: number;

  const { open } = dashboardSuite(async (started) => {
    gw = started;
    receiver = await startReceiver();
    shopId = (await createPairedDevice(gw, SHOP)).id as number;
    await createPairedDevice(gw, OFFICE);
  });
  afterAll(async () => {
    await receiver?.close();
  });
  const fromCustomer = async (to: string, text: string) => {
    const sent = await gw.request('POST', `/sandbox/phones/${CUSTOMER}/messages`, { to, text });
    expect(sent.status, JSON.stringify(sent.body)).toBe(200);
  };
  const hooks = async () => (await gw.request('GET', '/webhooks')).body.data as Array<Record<string, unknown>>;

  it('refuses a forbidden header in the API’s words, then creates a filtered webhook and shows its secret once', async () => {
    const p = await open('webhook create', '#/devices');
    await p.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Webhooks', exact: true }).click();
    await p.getByRole('heading', { name: 'Webhooks', exact: true }).waitFor(WAIT);
    await p.getByText('No webhook yet').waitFor(WAIT);
    await p.getByRole('button', { name: 'New webhook', exact: true }).click();
    const form = p.getByRole('form', { name: 'New webhook' });
    await form.getByLabel('Webhook URL').fill(receiver.url);
    await form.getByLabel('Only these:').check();
    await form.getByRole('checkbox', { name: /device 6281377000711/ }).check();
    await form.getByLabel('Event types').fill('message.incoming');
    await form.getByRole('button', { name: 'Add header', exact: true }).click();
    await form.getByLabel('Header 1 name').fill('Host');
    await form.getByLabel('Header 1 value').fill('example.com');
    await form.getByRole('button', { name: 'Create webhook', exact: true }).click();
    // The API's message, and its words for the field under the headers.
    const alerts = async () => (await form.getByRole('alert').allTextContents()).join(' | ');
    await expect.poll(alerts).toContain('Validation failed');
    expect(await alerts()).toContain('is set by the gateway: Host');
    expect(await hooks()).toEqual([]);

    await form.getByLabel('Header 1 name').fill('X-Shop');
    await form.getByLabel('Header 1 value').fill('front-desk');
    await form.getByRole('button', { name: 'Create webhook', exact: true }).click();
    const created = p.getByRole('status').filter({ hasText: 'Webhook created' });
    await created.waitFor(WAIT);
    const secret = (await created.getByLabel('Signing secret').textContent()) ?? '';
    expect(secret).toMatch(/^whsec_/);
    const copied = await copiedText(p, async () => {
      await created.getByRole('button', { name: 'Copy signing secret', exact: true }).click();
      await created.getByText('Copied', { exact: true }).waitFor(WAIT);
    });
    expect(copied).toBe(secret);
    const [hook] = await hooks();
    expect(hook).toMatchObject({
      url: receiver.url,
      devices: [shopId],
      events: ['message.incoming'],
      headers: { 'X-Shop': 'front-desk' },
      enabled: true,
    });
    expect(hook).not.toHaveProperty('secret');
    const row = p.getByRole('region', { name: 'Webhooks table' }).getByRole('row').filter({ hasText: receiver.url });
    expect(await row.textContent()).toContain('message.incoming');
    expect(await row.textContent()).toContain(`device ${SHOP}`);

    // Only the shop's incoming messages reach it, with the header, signed with the secret shown.
    await fromCustomer(OFFICE, 'to the office: not for this webhook');
    await fromCustomer(SHOP, 'to the shop');
    const index = await waitFor(
      () => receiver.bodies.findIndex((b) => (b as { data?: { message?: string } }).data?.message === 'to the shop'),
      (i) => i >= 0,
      { what: 'the delivery', timeoutMs: 10_000 },
    );
    expect(receiver.bodies.some((b) => JSON.stringify(b).includes('to the office'))).toBe(false);
    const headers = receiver.headers[index]!;
    expect(headers['x-shop']).toBe('front-desk');
    const signed = `${String(headers['webhook-id'])}.${String(headers['webhook-timestamp'])}.${receiver.raw[index]!}`;
    const mac = createHmac('sha256', Buffer.from(secret.slice('whsec_'.length), 'base64'))
      .update(signed)
      .digest('base64');
    expect(String(headers['webhook-signature'])).toContain(`v1,${mac}`);
    expect(await seriousViolations(p)).toEqual([]);
  });

  it('shows a webhook’s deliveries with a retry; disables, rotates its secret and deletes it (asked first)', async () => {
    const [hook] = await hooks();
    const p = await open('webhook page', `#/webhooks/${String(hook!.id)}`);
    const log = p.getByRole('region', { name: 'Deliveries table' });
    const delivery = log.getByRole('row').filter({ hasText: 'message.incoming' });
    await delivery.waitFor(WAIT);
    await expect.poll(() => delivery.textContent()).toContain('delivered');
    const before = receiver.bodies.length;
    await delivery.getByRole('button', { name: /^Retry delivery / }).click();
    await p.getByRole('status').filter({ hasText: 'will be sent again now' }).waitFor(WAIT);
    await waitFor(
      () => receiver.bodies.length,
      (n) => n > before,
      { what: 'the retried delivery', timeoutMs: 10_000 },
    );

    await p.getByRole('button', { name: 'Disable', exact: true }).click();
    await p.getByRole('button', { name: 'Enable', exact: true }).waitFor(WAIT);
    expect((await hooks())[0]!.enabled).toBe(false);
    await p.getByRole('button', { name: 'Enable', exact: true }).click();
    await p.getByRole('button', { name: 'Disable', exact: true }).waitFor(WAIT);
    expect((await hooks())[0]!.enabled).toBe(true);

    await p.getByRole('button', { name: 'Rotate secret', exact: true }).click();
    await p.getByRole('button', { name: 'Yes, rotate', exact: true }).click();
    const rotated = p.getByRole('status').filter({ hasText: 'Secret rotated' });
    await rotated.waitFor(WAIT);
    expect(await rotated.getByLabel('Signing secret').textContent()).toMatch(/^whsec_/);

    await p.getByRole('button', { name: 'Delete webhook', exact: true }).click();
    await p.getByRole('button', { name: 'Yes, delete', exact: true }).click();
    await p.getByRole('heading', { name: 'Webhooks', exact: true }).waitFor(WAIT);
    await p.getByRole('status').filter({ hasText: receiver.url }).waitFor(WAIT);
    await p.getByText('No webhook yet').waitFor(WAIT);
    expect(await hooks()).toEqual([]);
    expect((await gw.request('GET', `/webhooks/${String(hook!.id)}`)).status).toBe(404);
  });
});
