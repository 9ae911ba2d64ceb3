// The end of a pairing window as the pairing page shows it (issue 22): the
// page says the window ended, shows no QR of the ended attempt, starts no new
// attempt by itself, and offers one; the new attempt's QR is fresh (another
// code, a full window, and a phone can scan it). Also when the browser's clock
// is not the gateway's, as on a laptop whose clock was never set: the window
// is the gateway's, not the browser's. The window is short (6 s); the test
// waits for its end by polling, never by sleeping.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import type { TestGateway } from '../helpers/gateway.js';
import { waitForDevice } from '../helpers/pairing.js';
import { connectBrowser, PageSlot, signIn, startDashboardGateway } from './harness.js';

const WINDOW_S = 6;
const WAIT = { timeout: 20_000 };

describe('the end of a pairing window on the pairing page', () => {
  let gw: TestGateway;
  let base: string;
  let browser: Browser;
  const pages = new PageSlot(
    () => browser,
    () => base,
    20_000,
  );

  beforeAll(async () => {
    ({ gw, base } = await startDashboardGateway({ pairingWindowS: WINDOW_S }));
    browser = await connectBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await gw?.close();
  });
  afterEach((test) => pages.close(test));

  async function page(name: string, width: number, height: number, clockOffsetMs = 0): Promise<Page> {
    const { context, page: p } = await pages.open(name, width, height);
    // The browser's clock set apart from the gateway's (it keeps running).
    if (clockOffsetMs !== 0) await context.clock.install({ time: Date.now() + clockOffsetMs });
    await signIn(p);
    return p;
  }

  const qrSrc = (p: Page) => p.getByRole('img', { name: /QR code/ }).getAttribute('src');

  async function watchTheWindowEnd(p: Page, id: number): Promise<string | null> {
    await p.goto(`/dashboard/#/devices/${id}/pair`);
    await p.getByRole('img', { name: /QR code/ }).waitFor(WAIT);
    // The gateway's window, whatever the browser's clock says.
    expect(await p.getByText(/Time left in this pairing window/).textContent()).toMatch(/0:0[0-6]/);
    const first = await qrSrc(p);
    const ended = p.getByRole('alert').filter({ hasText: 'pairing window' });
    await ended.waitFor(WAIT);
    expect(await ended.textContent()).toContain('ended');
    expect(await p.getByRole('img', { name: /QR code/ }).count()).toBe(0);
    // The gateway agrees, and the page started no new attempt by itself: the device stays EXPIRED
    // through the page's next rounds of polling (its QR every 2.5 s, its device every 3 s).
    await waitForDevice(gw, id, (d) => d.paired_status === 'EXPIRED', 'EXPIRED', 20_000);
    const polled = await countRequests(p, 2);
    expect(polled.qr, 'QR requests after the window ended').toBe(0);
    expect((await gw.request('GET', `/devices/${id}`)).body.data.paired_status).toBe('EXPIRED');
    expect(await p.getByRole('img', { name: /QR code/ }).count()).toBe(0);
    return first;
  }

  /** Waits until the page has asked for its device `rounds` more times; says how many QR requests it made meanwhile. */
  async function countRequests(p: Page, rounds: number): Promise<{ qr: number }> {
    let device = 0;
    let qr = 0;
    const seen = (request: { url(): string }) => {
      const path = new URL(request.url()).pathname;
      if (/^\/devices\/\d+$/.test(path)) device++;
      if (/^\/devices\/\d+\/qr$/.test(path)) qr++;
    };
    p.on('request', seen);
    await expect.poll(() => device, { timeout: 20_000 }).toBeGreaterThanOrEqual(rounds);
    p.off('request', seen);
    return { qr };
  }

  async function tryAgainAndPair(p: Page, id: number, stale: string | null, phone: string): Promise<void> {
    // By keyboard; focus then stays in the card (the button goes away), not back at the top of the page.
    await p.getByRole('button', { name: 'Start a new pairing attempt', exact: true }).focus();
    await p.keyboard.press('Enter');
    await expect.poll(() => p.evaluate<string>('document.activeElement?.textContent ?? ""')).toBe('Scan the QR code');
    await p.getByRole('img', { name: /QR code/ }).waitFor(WAIT);
    expect(await qrSrc(p)).not.toBe(stale);
    expect(await p.getByText(/Time left in this pairing window/).textContent()).toMatch(/0:0[0-6]/);
    // Fresh: the virtual phone scans the code shown now, and the device pairs.
    await p.getByLabel('Virtual phone number').fill(phone);
    await p.getByRole('button', { name: 'Scan with virtual phone', exact: true }).click();
    await p.getByText('Connected', { exact: true }).waitFor(WAIT);
    expect((await gw.request('GET', `/devices/${id}`)).body.data).toMatchObject({ paired_status: 'PAIRED', phone });
  }

  it('on a phone-sized screen: says the window ended, drops the QR, and a new attempt shows a fresh one', async () => {
    const id = (await gw.request('POST', '/devices', { package: 'BETA', name: 'Slow phone' })).body.data.id;
    const p = await page('pairing window ended 375', 375, 812);
    const stale = await watchTheWindowEnd(p, id);
    await tryAgainAndPair(p, id, stale, '6281377300101');
  });

  it('with the browser’s clock a minute and a half behind the gateway’s', async () => {
    const id = (await gw.request('POST', '/devices', { package: 'BETA', name: 'Late clock' })).body.data.id;
    const p = await page('pairing window ended clock behind', 1440, 900, -90_000);
    const stale = await watchTheWindowEnd(p, id);
    await tryAgainAndPair(p, id, stale, '6281377300202');
  });

  it('with the browser’s clock a minute and a half ahead of the gateway’s', async () => {
    const id = (await gw.request('POST', '/devices', { package: 'BETA', name: 'Early clock' })).body.data.id;
    const p = await page('pairing window ended clock ahead', 1440, 900, 90_000);
    const stale = await watchTheWindowEnd(p, id);
    await tryAgainAndPair(p, id, stale, '6281377300303');
  });
});
