// docs/internals.md, WhatsApp and sandbox accounts; The dashboard: on a gateway running WhatsApp, the dashboard's banner
// names the network of the signed-in account's devices. A sandbox account
// sees the sandbox (and its virtual phones); any other account sees WhatsApp
// and no sandbox controls. No device connects here, so WhatsApp's address is
// a closed local port.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { TEST_TOKEN, type TestGateway } from '../helpers/gateway.js';
import { closedPort } from '../helpers/ports.js';
import { deviceRow } from '../helpers/rows.js';
import { connectBrowser, PageSlot, signIn, startDashboardGateway } from './harness.js';

describe('the dashboard of a gateway running WhatsApp and sandbox accounts', () => {
  let gw: TestGateway;
  let base: string;
  let browser: Browser;
  let sandboxToken: string;
  const pages = new PageSlot(
    () => browser,
    () => base,
  );

  beforeAll(async () => {
    ({ gw, base } = await startDashboardGateway({
      network: 'whatsapp',
      networkKey: { current: Buffer.alloc(32, 0x33), previous: [] },
      whatsappUrl: `ws://127.0.0.1:${await closedPort()}/ws/chat`,
    }));
    const account = await gw.app.services.accounts.createAccount('lab', 10, { sandbox: true });
    sandboxToken = (await gw.app.services.accounts.createToken(account.id, 'dashboard')).token;
    browser = await connectBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await gw?.close();
  });

  async function page(name: string) {
    return (await pages.open(name)).page;
  }
  afterEach((test) => pages.close(test));

  it('a sandbox account sees that its devices are on the sandbox, with its virtual phones', async () => {
    const p = await page('sandbox account banner');
    await signIn(p, sandboxToken);
    const banner = await p.getByRole('banner').textContent();
    expect(banner).toContain('Sandbox network (simulated, offline)');
    expect(banner).toContain('account lab');
    expect(banner).not.toContain('WhatsApp');
    expect(await p.getByRole('link', { name: 'Virtual phones', exact: true }).count()).toBe(1);
  });

  it('any other account sees WhatsApp, and no sandbox controls', async () => {
    const p = await page('whatsapp account banner');
    await signIn(p, TEST_TOKEN);
    const banner = await p.getByRole('banner').textContent();
    expect(banner).toContain('WhatsApp network');
    expect(banner).toContain('account default');
    expect(banner).not.toContain('Sandbox');
    expect(await p.getByRole('link', { name: 'Virtual phones', exact: true }).count()).toBe(0);
  });

  it('marks a device kept on the sandbox (paired there before the gateway ran WhatsApp), in the list and its page', async () => {
    // Written straight into the store after start-up: no connection is attempted for it, the mark is what is tested.
    const owner = await gw.app.services.accounts.findAccount('default');
    const kept = await gw.app.store.db
      .insertInto('devices')
      .values(
        deviceRow(owner.id, {
          name: 'kept on sandbox',
          phone: '6281277000009',
          paired_status: 'PAIRED',
          network_session: 'sbx1.kept',
          network: 'sandbox',
        }),
      )
      .returning('id')
      .executeTakeFirstOrThrow();
    const fresh = await gw.request('POST', '/devices', { package: 'BETA', name: 'pairs on whatsapp' });
    expect(fresh.body.data.network).toBe('whatsapp');
    const p = await page('device kept on sandbox');
    await signIn(p, TEST_TOKEN);
    await p.getByRole('link', { name: 'Devices', exact: true }).click();
    const keptRow = p.getByRole('row').filter({ hasText: 'kept on sandbox' });
    await expect.poll(() => keptRow.textContent()).toContain('on the sandbox');
    const freshRow = p.getByRole('row').filter({ hasText: 'pairs on whatsapp' });
    expect(await freshRow.textContent()).not.toContain('on the sandbox');
    expect(await freshRow.textContent()).not.toContain('on WhatsApp');
    await p.goto(`${base}#/devices/${kept.id}`);
    await expect.poll(() => p.locator('.title-row').first().textContent()).toContain('on the sandbox');
  });
});
