// Debian's Chromium as the dashboard tests start it: its path, the flags this machine needs, and the one browser
// server the dashboard project shares (started by test/dashboard/browser-global.ts, joined by each file through
// `connectBrowser` in the harness). Imports nothing of vitest's test API: the global setup runs in vitest's own
// process, outside any test file.
import { chromium, type BrowserServer } from 'playwright-core';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/**
 * Flags this machine needs: no sandbox as root, no GPU, and no background traffic to the closed network. No
 * `--disable-features` of our own: Chromium keeps only the last one given, so it would replace playwright-core's
 * (which already turns off OptimizationHints and MediaRouter, and also PaintHolding and others). The pages of one site
 * share renderer processes (`--disable-site-isolation-trials`): the dashboard project made 88 renderers instead of
 * 161, and Chromium used about 9 % less CPU (docs/testing.md, The CPU left, and three cuts).
 */
const CHROMIUM_FLAGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-dev-shm-usage',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-site-isolation-trials',
];

/**
 * One browser for every file of the project. Each file connects to it and makes a new context per test (its own
 * cookies, storage, permissions and clock), so files share the browser's processes and nothing else: one launch a
 * run instead of one a file (docs/testing.md, One browser for the dashboard project; the pages' own renderers cost
 * far more than the launches did).
 */
export function launchBrowserServer(): Promise<BrowserServer> {
  // playwright-core gives the browser a new, empty profile directory and removes it on close.
  return chromium.launchServer({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_FLAGS });
}
