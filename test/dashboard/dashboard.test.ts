// The dashboard in a real browser (issue 13, docs/internals.md, The dashboard): Debian's Chromium,
// driven by playwright-core, against a real gateway listening on 127.0.0.1
// with the in-process sandbox. Controls are found by role and accessible name
// only. The tests run in order and build on each other (one device is created,
// paired, then used), as a person would go through the dashboard.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { TEST_TOKEN, type TestGateway } from '../helpers/gateway.js';
import { waitFor } from '../helpers/wait.js';
import {
  docsScreenshot,
  connectBrowser,
  copiedText,
  openSignedIn,
  PageSlot,
  seriousViolations,
  signIn,
  startDashboardGateway,
  startReceiver,
} from './harness.js';

const DEVICE = 'Front desk';
const DEVICE_PHONE = '6281377000101';
const CUSTOMER = '6281377000202';
const WAIT = { timeout: 15_000 };

describe('the dashboard in a browser', () => {
  let gw: TestGateway;
  let base: string;
  let browser: Browser;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  const pages = new PageSlot(
    () => browser,
    () => base,
  );

  beforeAll(async () => {
    ({ gw, base } = await startDashboardGateway());
    browser = await connectBrowser();
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await browser?.close();
    await gw?.close();
    await receiver?.close();
  });

  /** A fresh page for the test; its last state is photographed and its console checked afterwards. */
  async function page(name: string, width?: number) {
    return (await pages.open(name, width)).page;
  }
  afterEach((test) => pages.close(test));

  /** The devices list's row of the test's device. */
  const deviceRow = (p: Page) => p.getByRole('row').filter({ has: p.getByRole('rowheader', { name: DEVICE }) });

  it('a wrong token shows an error and stays on the sign-in page', async () => {
    const p = await page('wrong token');
    await p.goto('/dashboard/');
    await p.getByLabel('API token', { exact: true }).fill('mgw_not_a_token_of_this_gateway_0000000000');
    await p.getByRole('button', { name: 'Sign in', exact: true }).click();
    const alert = p.getByRole('alert');
    await alert.waitFor(WAIT);
    expect(await alert.textContent()).toContain('Unauthorized');
    expect(await p.getByLabel('API token', { exact: true }).isVisible()).toBe(true);
    expect(await p.getByRole('button', { name: 'Sign in', exact: true }).isVisible()).toBe(true);
    expect(await p.evaluate('sessionStorage.length')).toBe(0);
  });

  it('signs in, names the network and node in the banner, and signs out', async () => {
    const p = await page('sign in and out');
    // By keyboard alone: the token field is the first stop, Enter submits.
    await p.goto('/dashboard/');
    await p.getByLabel('API token', { exact: true }).waitFor(WAIT);
    await p.keyboard.press('Tab');
    expect(await p.evaluate<string>('document.activeElement?.id ?? ""')).toBe('signin-token');
    await p.keyboard.type(TEST_TOKEN);
    await p.keyboard.press('Enter');
    await p.getByRole('heading', { name: 'Devices', exact: true }).waitFor(WAIT);
    const banner = p.getByRole('banner');
    expect(await banner.textContent()).toContain('Sandbox network');
    expect(await banner.textContent()).toContain('node-a');
    // The token stays out of the address bar, and in the tab across a reload.
    expect(p.url()).not.toContain(TEST_TOKEN);
    await p.reload();
    await p.getByRole('heading', { name: 'Devices', exact: true }).waitFor(WAIT);
    await p.getByRole('button', { name: 'Sign out', exact: true }).click();
    await p.getByLabel('API token', { exact: true }).waitFor(WAIT);
    expect(await p.evaluate('sessionStorage.length')).toBe(0);
  });

  it('creates a device', async () => {
    const p = await pages.openSignedIn('create device');
    await p.getByRole('button', { name: 'Add device', exact: true }).click();
    await p.getByLabel('Name', { exact: true }).fill(DEVICE);
    await p.getByLabel('Package', { exact: true }).selectOption('BUSINESS');
    await p.getByRole('button', { name: 'Create', exact: true }).click();
    const row = deviceRow(p);
    await row.getByRole('link', { name: 'Pair', exact: true }).waitFor(WAIT);
    expect(await row.textContent()).toContain('UNPAIRED');
    expect(await row.textContent()).toContain('Business');
    const devices = (await gw.request('GET', '/devices')).body.data;
    expect(devices).toHaveLength(1);
    expect(devices[0]).toMatchObject({ name: DEVICE, package: { code: 'BUSINESS' } });
  });

  it('pairs the device with the virtual phone from the QR image, and turns Connected without a reload', async () => {
    const p = await pages.openSignedIn('pair with virtual phone');
    const row = deviceRow(p);
    await row.getByRole('link', { name: 'Pair', exact: true }).click();
    const qr = p.getByRole('img', { name: /QR code/ });
    await qr.waitFor(WAIT);
    expect(await p.getByText(/Time left in this pairing window/).textContent()).toMatch(/\d:\d\d/);
    await docsScreenshot(p, 'dashboard-pairing.png');
    const loads: string[] = [];
    p.on('framenavigated', (frame) => {
      if (frame === p.mainFrame()) loads.push(frame.url());
    });
    await p.getByLabel('Virtual phone number').fill(DEVICE_PHONE);
    await p.getByRole('button', { name: 'Scan with virtual phone', exact: true }).click();
    const connected = p.getByText('Connected', { exact: true });
    await connected.waitFor(WAIT);
    expect(await p.getByRole('status').filter({ hasText: 'Connected' }).textContent()).toContain(DEVICE_PHONE);
    expect(loads).toEqual([]);
    const device = (await gw.request('GET', '/devices')).body.data[0];
    expect(device).toMatchObject({ paired_status: 'PAIRED', phone: DEVICE_PHONE });

    await p.getByRole('link', { name: 'Devices', exact: true }).first().click();
    const listed = deviceRow(p);
    await listed.getByText('PAIRED', { exact: true }).waitFor(WAIT);
    expect(await listed.getByRole('link', { name: 'Pair', exact: true }).count()).toBe(0);
  });

  it('sends a chat that reaches delivered, then read once the virtual phone reads it', async () => {
    const p = await pages.openSignedIn('send chat delivered read');
    await deviceRow(p).getByRole('link', { name: 'Messages', exact: true }).click();
    await p.getByLabel('Receiver').fill(CUSTOMER);
    await p.getByLabel('Text', { exact: true }).fill('Hello from the dashboard');
    await p.getByRole('button', { name: 'Send message', exact: true }).click();
    const row = p.getByRole('row').filter({ hasText: 'Hello from the dashboard' });
    await row.getByText('delivered', { exact: true }).waitFor(WAIT);

    await p.getByRole('link', { name: 'Virtual phones', exact: true }).click();
    await p.getByLabel('Phone number').fill(CUSTOMER);
    await p.getByRole('button', { name: 'Open inbox', exact: true }).click();
    await p.getByRole('button', { name: /^Mark read/ }).click();
    await p.getByRole('status').filter({ hasText: 'Marked read' }).waitFor(WAIT);

    await p.getByRole('link', { name: 'Devices', exact: true }).click();
    await deviceRow(p).getByRole('link', { name: 'Messages', exact: true }).click();
    await p
      .getByRole('row')
      .filter({ hasText: 'Hello from the dashboard' })
      .getByText('read', { exact: true })
      .waitFor(WAIT);
    const listed = (await gw.request('GET', `/messages?device=${DEVICE_PHONE}`)).body.data[0];
    expect(listed).toMatchObject({ status: 'delivered', message: 'Hello from the dashboard' });
    expect(listed.read_at).not.toBeNull();
  });

  it('shows the API’s error next to the field it names', async () => {
    const id = (await gw.request('GET', '/devices')).body.data[0].id;
    const p = await pages.openSignedIn('send error by field', `#/devices/${id}/messages`);
    await p.getByLabel('Receiver').fill('+62 813');
    await p.getByLabel('Text', { exact: true }).fill('never sent');
    await p.getByRole('button', { name: 'Send message', exact: true }).click();
    const receiver = p.getByLabel('Receiver');
    await p.locator('input[aria-invalid="true"]').waitFor(WAIT);
    expect(await receiver.getAttribute('aria-invalid')).toBe('true');
    // The field's description is the API's message for `receiver`; the envelope's message is announced.
    const describedBy = (await receiver.getAttribute('aria-describedby')) ?? '';
    // Evaluated in the page (a string: this file is type-checked without the DOM's types).
    const fieldError = await p.evaluate<string>(
      `${JSON.stringify(describedBy.split(' '))}.map((i) => document.getElementById(i)?.textContent ?? '').join(' ')`,
    );
    expect(fieldError).toContain('international format');
    expect(await p.getByRole('alert').filter({ hasText: 'Invalid phone number format' }).count()).toBe(1);
  });

  it('sets a webhook URL and shows a delivery with its attempt in the log', async () => {
    const id = (await gw.request('GET', '/devices')).body.data[0].id;
    const p = await pages.openSignedIn('webhook delivery log', `#/devices/${id}/webhooks`);
    await p.getByLabel('Webhook URL').fill(receiver.url);
    await p.getByRole('button', { name: 'Save webhook', exact: true }).click();
    await p.getByRole('status').filter({ hasText: 'Webhook saved' }).waitFor(WAIT);
    expect((await gw.request('GET', `/devices/${id}`)).body.data.webhook_url).toBe(receiver.url);

    // An event: the customer writes to the device, from the virtual phone panel.
    await p.getByRole('link', { name: 'Virtual phones', exact: true }).click();
    await p.getByLabel('Phone number').fill(CUSTOMER);
    await p.getByRole('button', { name: 'Open inbox', exact: true }).click();
    await p.getByLabel('Message text').fill('Is the shop open?');
    await p.getByRole('button', { name: 'Send to device', exact: true }).click();
    await p.getByRole('status').filter({ hasText: 'Sent' }).waitFor(WAIT);
    await waitFor(
      () => receiver.bodies.length,
      (n) => n > 0,
      { what: 'a delivery at the receiver', timeoutMs: 15_000 },
    );

    await p.goto(`/dashboard/#/devices/${id}/webhooks`);
    const delivery = p.getByRole('row').filter({ hasText: 'message.incoming' });
    await delivery.getByText('delivered', { exact: true }).waitFor(WAIT);
    expect(await delivery.textContent()).toMatch(/200 · \d+ ms/);
    await delivery.getByRole('button', { name: /^Retry delivery/ }).click();
    await p.getByRole('status').filter({ hasText: 'will be sent again' }).waitFor(WAIT);

    // The secret stays hidden until asked for.
    const secret = (await gw.request('GET', `/devices/${id}`)).body.data.webhook_secret as string;
    expect(await p.getByText(secret).count()).toBe(0);
    await p.getByRole('button', { name: 'Show secret', exact: true }).click();
    await p.getByText(secret).waitFor(WAIT);
    await p.getByRole('button', { name: 'Rotate secret', exact: true }).click();
    await p.getByRole('button', { name: 'Yes, rotate', exact: true }).click();
    await p.getByRole('status').filter({ hasText: 'Secret rotated' }).waitFor(WAIT);
    const rotated = (await gw.request('GET', `/devices/${id}`)).body.data.webhook_secret as string;
    expect(rotated).not.toBe(secret);
    await p.getByText(rotated).waitFor(WAIT);
  });

  it('sets the webhook format and reply by response', async () => {
    const id = (await gw.request('GET', '/devices')).body.data[0].id;
    const p = await pages.openSignedIn('webhook format', `#/devices/${id}/webhooks`);
    await p.getByLabel('Webhook URL').fill(receiver.url);
    await p.getByLabel('Webhook format').selectOption('whatspie_v1');
    // Reply by response is always on for the Whatspie formats: the switch is for standard only.
    expect(await p.getByLabel('Reply by response').count()).toBe(0);
    await p.getByRole('button', { name: 'Save webhook', exact: true }).click();
    await p.getByRole('status').filter({ hasText: 'Webhook saved' }).waitFor(WAIT);
    expect((await gw.request('GET', `/devices/${id}`)).body.data.webhook_format).toBe('whatspie_v1');

    await p.getByLabel('Webhook format').selectOption('standard');
    await p.getByLabel('Reply by response').check();
    await p.getByRole('button', { name: 'Save webhook', exact: true }).click();
    await waitFor(
      async () => (await gw.request('GET', `/devices/${id}`)).body.data,
      (d) => d.webhook_format === 'standard' && d.webhook_reply === true,
      { what: 'standard with reply by response saved' },
    );
    await p.getByLabel('Reply by response').uncheck();
    await p.getByRole('button', { name: 'Save webhook', exact: true }).click();
    await waitFor(
      async () => (await gw.request('GET', `/devices/${id}`)).body.data.webhook_reply,
      (reply) => reply === false,
      { what: 'reply by response off' },
    );
  });

  it('creates a token, shows its secret once, and revokes it', async () => {
    const p = await pages.openSignedIn('tokens create revoke');
    await p.getByRole('link', { name: 'API tokens', exact: true }).click();
    await p.getByLabel('Token name').fill('ci-deploy');
    await p.getByRole('button', { name: 'Create token', exact: true }).click();
    const shown = p.getByLabel('New token secret');
    await shown.waitFor(WAIT);
    const secret = (await shown.textContent()) ?? '';
    expect(secret).toMatch(/^mgw_/);
    expect((await gw.request('GET', '/devices', undefined, secret)).status).toBe(200);
    const copied = await copiedText(p, async () => {
      await p.getByRole('button', { name: 'Copy token', exact: true }).click();
      await p.getByText('Copied', { exact: true }).waitFor(WAIT);
    });
    expect(copied).toBe(secret);

    // The token in use is marked.
    const inUse = p.getByRole('row').filter({ hasText: 'in use by this page' });
    expect(await inUse.count()).toBe(1);
    expect(await inUse.textContent()).not.toContain('ci-deploy');

    await p.getByRole('button', { name: 'Revoke ci-deploy', exact: true }).click();
    await p.getByRole('button', { name: 'Yes, revoke', exact: true }).click();
    await p.getByRole('status').filter({ hasText: 'revoked' }).waitFor(WAIT);
    // The notice and the list agree at once: the row is gone when the notice shows.
    expect(await p.getByRole('rowheader', { name: 'ci-deploy' }).count()).toBe(0);
    expect((await gw.request('GET', '/devices', undefined, secret)).status).toBe(401);
  });

  it('asks before revoking the token in use, then signs out', async () => {
    const created = await gw.request('POST', '/tokens', { name: 'laptop' });
    const p = await page('revoke token in use');
    await signIn(p, created.body.data.token);
    await p.getByRole('link', { name: 'API tokens', exact: true }).click();
    await p.getByRole('button', { name: 'Revoke laptop', exact: true }).click();
    await p.getByRole('group', { name: /token this page is signed in with/ }).waitFor(WAIT);
    await p.getByRole('button', { name: 'Yes, revoke and sign out', exact: true }).click();
    await p.getByLabel('API token', { exact: true }).waitFor(WAIT);
    expect((await gw.request('GET', '/devices', undefined, created.body.data.token)).status).toBe(401);
  });

  it('filters messages by direction and status, shows a failure’s reason, and loads older ones by cursor', async () => {
    // 0000: a number that is not on the network, so the message fails (the sandbox's magic numbers).
    const send = (receiver: string, text: string) =>
      gw.request('POST', '/messages', { device: DEVICE_PHONE, receiver, type: 'chat', params: { text } });
    expect((await send('6281377000000', 'to nobody')).status).toBe(200);
    for (let i = 0; i < 21; i++) expect((await send(CUSTOMER, `bulk ${i}`)).status).toBe(200);
    const id = (await gw.request('GET', '/devices')).body.data[0].id;
    const p = await pages.openSignedIn('messages filters and cursor', `#/devices/${id}/messages`);
    const table = p.getByRole('region', { name: 'Messages table' });
    await table.getByText('bulk 20', { exact: true }).waitFor(WAIT);

    await p.getByLabel('Direction', { exact: true }).selectOption('incoming');
    await table.getByText('Is the shop open?', { exact: true }).waitFor(WAIT);
    expect(await table.getByText('bulk 20', { exact: true }).count()).toBe(0);

    await p.getByLabel('Direction', { exact: true }).selectOption('');
    await p.getByLabel('Status', { exact: true }).selectOption('failed');
    const failed = table.getByRole('row').filter({ hasText: 'to nobody' });
    await failed.waitFor(WAIT);
    expect(await failed.textContent()).toMatch(/failed .*: .+/);
    expect(await table.getByText('bulk 20', { exact: true }).count()).toBe(0);

    await p.getByLabel('Status', { exact: true }).selectOption('');
    await table.getByText('bulk 20', { exact: true }).waitFor(WAIT);
    const rows = () => table.getByRole('row').count();
    expect(await rows()).toBe(21); // a header and the newest 20
    await p.getByRole('button', { name: 'Load more messages', exact: true }).click();
    await table.getByText('Hello from the dashboard', { exact: true }).waitFor(WAIT);
    expect(await rows()).toBeGreaterThan(21);
  });

  it('refreshes the list by itself, renames, restarts and deletes a device (asking first)', async () => {
    const p = await page('device actions');
    await signIn(p);
    // Made elsewhere (through the API): the open list shows it without a reload.
    const spare = (await gw.request('POST', '/devices', { package: 'BETA', name: 'Spare' })).body.data.id;
    await p.getByRole('rowheader', { name: 'Spare' }).waitFor(WAIT);

    await p.getByRole('link', { name: 'Spare', exact: true }).click();
    await p.getByLabel('Device name').fill('Spare phone');
    await p.getByRole('button', { name: 'Save name', exact: true }).click();
    await p.getByRole('heading', { name: 'Spare phone', exact: true }).waitFor(WAIT);
    expect((await gw.request('GET', `/devices/${spare}`)).body.data.name).toBe('Spare phone');

    await p.getByRole('button', { name: 'Delete device', exact: true }).click();
    await p.getByRole('group', { name: /Delete “Spare phone”\?/ }).waitFor(WAIT);
    await p.getByRole('button', { name: 'Cancel', exact: true }).click();
    expect((await gw.request('GET', `/devices/${spare}`)).status).toBe(200);
    await p.getByRole('button', { name: 'Delete device', exact: true }).click();
    await p.getByRole('button', { name: 'Yes, delete', exact: true }).click();
    await p.getByRole('heading', { name: 'Devices', exact: true }).waitFor(WAIT);
    expect(await p.getByRole('rowheader', { name: 'Spare phone' }).count()).toBe(0);
    expect((await gw.request('GET', `/devices/${spare}`)).status).toBe(404);

    const id = (await gw.request('GET', '/devices')).body.data[0].id;
    await p.getByRole('link', { name: DEVICE, exact: true }).click();
    await p.getByRole('button', { name: 'Restart connection', exact: true }).click();
    await p.getByRole('status').filter({ hasText: 'Restarting the connection' }).waitFor(WAIT);
    await waitFor(
      async () => (await gw.request('GET', `/devices/${id}`)).body.data.connected,
      (connected) => connected === true,
      { what: 'the device back online', timeoutMs: 15_000 },
    );
    await p.getByText('online', { exact: true }).waitFor(WAIT);
  });

  it('lists a device’s groups, shows participants and roles, and adds members with the outcome per participant', async () => {
    const created = await gw.request('POST', '/sandbox/groups', {
      name: 'Shop team',
      members: [{ phone: DEVICE_PHONE, admin: true }, { phone: CUSTOMER }],
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const id = (await gw.request('GET', '/devices')).body.data[0].id;
    const p = await pages.openSignedIn('groups add members', `#/devices/${id}/groups`);
    await p.getByRole('link', { name: 'Shop team', exact: true }).click();
    const participants = p.getByRole('region', { name: 'Participants table' });
    await participants.getByRole('rowheader', { name: CUSTOMER }).waitFor(WAIT);
    expect(await participants.getByRole('row').filter({ hasText: DEVICE_PHONE }).textContent()).toContain('admin');

    // 0002: a phone whose privacy forbids group adds (the sandbox's magic numbers).
    await p.getByLabel('Phone numbers to add').fill('6281377000303, 6281377000002');
    await p.getByRole('button', { name: 'Add members', exact: true }).click();
    const outcome = p.getByRole('table', { name: 'Outcome per participant' });
    await outcome.waitFor(WAIT);
    expect(await outcome.getByRole('row').filter({ hasText: '6281377000303' }).textContent()).toContain('added');
    expect(await outcome.getByRole('row').filter({ hasText: '6281377000002' }).textContent()).toContain(
      'PRIVACY_SETTINGS',
    );
    expect(await p.getByRole('status').filter({ hasText: 'Some members added successfully' }).count()).toBe(1);
    await participants.getByRole('rowheader', { name: '6281377000303' }).waitFor(WAIT);
  });

  it('pairs by code, offered because the gateway documents the route', async () => {
    expect((await gw.request('GET', '/openapi.json')).body.paths['/devices/{id}/pairing-code']).toBeDefined();
    const phone = '6281377000404';
    const id = (await gw.request('POST', '/devices', { package: 'BETA', name: 'Kiosk', phone })).body.data.id;
    const p = await page('pair by code');
    // The page asks the gateway's OpenAPI document which routes it has (once, from the first page that needs it).
    const asked = p.waitForResponse((r) => r.url().endsWith('/openapi.json'));
    await openSignedIn(p, `#/devices/${id}/pair`);
    await p.getByRole('img', { name: /QR code/ }).waitFor(WAIT);
    await asked;
    const form = p.getByRole('form', { name: 'Pair with a code' });
    await form.getByLabel('Phone number for the code').fill(phone);
    await form.getByRole('button', { name: 'Get pairing code', exact: true }).click();
    await form.getByText(/^[A-Z0-9]{4}-[A-Z0-9]{4}$/).waitFor(WAIT);
    await form.getByRole('button', { name: 'Enter the code on the virtual phone', exact: true }).click();
    await p.getByText('Connected', { exact: true }).waitFor(WAIT);
    expect((await gw.request('GET', `/devices/${id}`)).body.data).toMatchObject({ paired_status: 'PAIRED', phone });
  });

  it('has no serious accessibility violation on any page, at 1440 and 375 px', async () => {
    const id = (await gw.request('GET', '/devices')).body.data[0].id;
    const unpaired = (await gw.request('POST', '/devices', { package: 'BETA', name: 'Back office' })).body.data.id;
    const groupId = (await gw.request('GET', `/groups?device=${DEVICE_PHONE}`)).body.data[0].id;
    for (const width of [1440, 375]) {
      const p = await page(`axe ${width}`, width);
      const report: string[] = [];
      const check = async (what: string) => {
        for (const v of await seriousViolations(p)) {
          report.push(`${width}px ${what}: ${v.id} (${v.impact}) ${v.help} at ${JSON.stringify(v.nodes[0]?.target)}`);
        }
      };
      await p.goto('/dashboard/');
      await p.getByLabel('API token', { exact: true }).waitFor(WAIT);
      await check('sign-in');
      await signIn(p);
      if (width === 1440) {
        // The guide's picture of the list (docs/guide.md): a paired device that has sent, and one waiting to be paired.
        await p.getByRole('rowheader', { name: 'Back office' }).waitFor(WAIT);
        await docsScreenshot(p, 'dashboard-devices.png');
      }
      await p.getByRole('button', { name: 'Add device', exact: true }).click();
      await check('devices');
      const views: Array<[string, string, () => Promise<unknown>]> = [
        [`#/devices/${id}`, 'device overview', () => p.getByRole('button', { name: 'Restart connection' }).waitFor()],
        [`#/devices/${unpaired}/pair`, 'pairing', () => p.getByRole('img', { name: /QR code/ }).waitFor()],
        [`#/devices/${id}/pair`, 'paired', () => p.getByText('Connected', { exact: true }).waitFor()],
        [`#/devices/${id}/messages`, 'messages', () => p.getByRole('table').first().waitFor()],
        [`#/devices/${id}/webhooks`, 'webhooks', () => p.getByRole('heading', { name: 'Delivery log' }).waitFor()],
        [`#/devices/${id}/groups`, 'groups', () => p.getByRole('link', { name: 'Shop team' }).waitFor()],
        [
          `#/devices/${id}/groups/${groupId}`,
          'group',
          () => p.getByRole('region', { name: 'Participants table' }).waitFor(),
        ],
        ['#/tokens', 'tokens', () => p.getByRole('table').waitFor()],
        ['#/phones', 'virtual phones', () => p.getByRole('button', { name: 'Open inbox' }).waitFor()],
      ];
      for (const [hash, what, ready] of views) {
        await p.goto(`/dashboard/${hash}`);
        await ready();
        await check(what);
      }
      // Every control reachable by keyboard shows where focus is.
      await p.goto('/dashboard/#/devices');
      await p.getByRole('button', { name: 'Add device' }).waitFor();
      await p.keyboard.press('Tab');
      const outline = await p.evaluate<string>(`(() => {
        const el = document.activeElement;
        return el === null || el === document.body ? 'none' : getComputedStyle(el).outlineStyle;
      })()`);
      expect(outline).not.toBe('none');
      expect(report).toEqual([]);
      if (width === 1440) {
        await pages.discard();
      }
    }
  });
});
