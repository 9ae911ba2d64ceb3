// What every browser test of the dashboard shares: a real gateway listening on
// 127.0.0.1 (SQLite, in-process sandbox) serving the freshly built dashboard,
// Debian's Chromium driven by playwright-core, a receiver for webhooks, and
// per page: console errors collected (any one fails the test), a screenshot of
// the last state of a failed test, and axe-core.
import { createHash } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { readFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import lockfile from 'proper-lockfile';
import { afterAll, afterEach, beforeAll, expect, inject, type TestContext } from 'vitest';
import type { Clock } from '../../src/clock.js';
import type { Config } from '../../src/config.js';
import { TEST_TOKEN, startGateway, type TestGateway } from '../helpers/gateway.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** Last-state screenshots of failed tests (gitignored). */
export const SCREENSHOT_DIR = join(ROOT, 'test-results', 'dashboard');
/** Set (to anything) to photograph every test's last state, passed or failed (by default only a failed test's). */
const LAST_STATE_ALWAYS = process.env.DASHBOARD_LAST_STATE !== undefined;
/** Set (to anything) to write the guide's screenshots (docs/guide.md) into docs/. */
export const DOCS_SCREENSHOTS = process.env.DASHBOARD_SCREENSHOTS !== undefined;

/** `clock`: the gateway's, for a test that moves time on (the browser keeps its own). */
export async function startDashboardGateway(
  config: Partial<Config> = {},
  clock?: Clock,
): Promise<{ gw: TestGateway; base: string }> {
  const gw = await startGateway({
    clock,
    config: { sendIntervalMs: 0, allowPrivateUrls: true, serverName: 'node-a', ...config },
    build: { dashboardDir: inject('dashboardDir'), sandbox: { deliveryDelayMs: 20, readDelayMs: 20 } },
  });
  await gw.app.listen({ host: '127.0.0.1', port: 0 });
  const address = gw.app.server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return { gw, base: `http://127.0.0.1:${address.port}` };
}

/**
 * The project's one browser (test/dashboard/browser-global.ts), joined by this file. `close()` on what it answers
 * ends this file's connection and the contexts it made, not the browser.
 */
export async function connectBrowser(): Promise<Browser> {
  return chromium.connect(inject('browserEndpoint'));
}

export interface TestPage {
  context: BrowserContext;
  page: Page;
  /** Script errors and console errors seen so far. */
  errors: string[];
}

/**
 * A new context and page. A 4xx answer the dashboard shows as an error is the API
 * doing its job; Chromium still logs it ("Failed to load resource: ... status of
 * 401"), so those lines alone are not counted. Every other console error is.
 */
export async function openPage(browser: Browser, base: string, width = 1440, height = 900): Promise<TestPage> {
  const context = await browser.newContext({
    baseURL: base,
    viewport: { width, height },
    permissions: ['clipboard-read', 'clipboard-write'],
  });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(`page error: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() !== 'error') return;
    const text = message.text();
    if (/^Failed to load resource: the server responded with a status of 4\d\d/.test(text)) return;
    errors.push(`console error: ${text}`);
  });
  return { context, page, errors };
}

export async function signIn(page: Page, token = TEST_TOKEN): Promise<void> {
  await page.goto('/dashboard/');
  await page.getByLabel('API token', { exact: true }).fill(token);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await expect.poll(() => page.getByRole('heading', { name: 'Devices', exact: true }).count()).toBe(1);
}

/** Where the dashboard keeps the signed-in token: its key in session storage (web/src/api.ts, `TOKEN_KEY`). */
const DASHBOARD_TOKEN_KEY = 'gateway.token';

/**
 * Opens the dashboard at `hash` already signed in with `token`, for a test of what comes after signing in: the token
 * is put where the sign-in form puts it before the page's own scripts run, and the page goes straight there. The
 * sign-in form itself is tested through the form (`signIn`, dashboard.test.ts). Seeded once per page, so a test that
 * signs out stays signed out across reloads. A wrong key would leave the page on the sign-in form, and the test
 * waiting for its route's content would fail. Rendering the sign-in form and the devices list first cost the browser
 * about 0.3 s of CPU a test (docs/testing.md, The CPU left, and three cuts).
 */
export async function openSignedIn(page: Page, hash = '', token = TEST_TOKEN): Promise<void> {
  const seeded = JSON.stringify(`${DASHBOARD_TOKEN_KEY}.seeded-by-test`);
  await page.addInitScript({
    content: `if (sessionStorage.getItem(${seeded}) === null) {
      sessionStorage.setItem(${JSON.stringify(DASHBOARD_TOKEN_KEY)}, ${JSON.stringify(token)});
      sessionStorage.setItem(${seeded}, '1');
    }`,
  });
  await page.goto(`/dashboard/${hash}`);
}

/**
 * Runs `copy` (a click on one of the dashboard's copy buttons, and the wait for its "Copied") and answers what the
 * clipboard then holds. The project's files share one Chromium (browser-global.ts), and its clipboard is the
 * browser's, not a context's: in ten whole runs in a row, one file once read the invite link another file had just
 * copied instead of its own webhook secret (docs/testing.md, Ten runs in a row). So the copy and the read hold a lock
 * that every file of the run takes for the same browser: proper-lockfile's, on a path beside the system's temporary
 * files named after the browser's endpoint (a lock left by a killed worker goes stale after 10 s).
 */
export async function copiedText(page: Page, copy: () => Promise<void>): Promise<string> {
  const endpoint = createHash('sha256').update(inject('browserEndpoint')).digest('hex').slice(0, 16);
  const release = await lockfile.lock(join(tmpdir(), `gateway-dashboard-clipboard-${endpoint}`), {
    realpath: false,
    stale: 10_000,
    retries: { retries: 600, minTimeout: 25, maxTimeout: 50 },
  });
  try {
    await copy();
    return String(await page.evaluate('navigator.clipboard.readText()'));
  } finally {
    await release();
  }
}

export function safeName(name: string): string {
  return name.replace(/[^A-Za-z0-9-]+/g, '-').slice(0, 80);
}

/**
 * The one page a test file has open at a time: opened by name (its screenshot's), and after each test photographed,
 * closed, and the test failed on any error the browser's console showed (`close`, from the file's `afterEach`).
 */
export class PageSlot {
  private current: TestPage | null = null;
  private name = '';

  constructor(
    private readonly browser: () => Browser,
    private readonly base: () => string,
    private readonly timeoutMs = 15_000,
  ) {}

  async open(name: string, width?: number, height?: number): Promise<TestPage> {
    this.current = await openPage(this.browser(), this.base(), width, height);
    this.name = name;
    this.current.context.setDefaultTimeout(this.timeoutMs);
    return this.current;
  }

  /** A new page named `name`, already signed in, at `/dashboard/${hash}` (`openSignedIn`). */
  async openSignedIn(name: string, hash = '', width?: number, height?: number): Promise<Page> {
    const { page } = await this.open(name, width, height);
    await openSignedIn(page, hash);
    return page;
  }

  /** Closes the page without a photograph or the console's check (a test that moves on to another page). */
  async discard(): Promise<void> {
    await this.current?.context.close();
    this.current = null;
  }

  /**
   * `test`: the test that ends (the `afterEach` hook's context). Its page is photographed when it failed, when the
   * console showed an error, or always with DASHBOARD_LAST_STATE set: a full-page picture costs the browser about as
   * much CPU as rendering the page did (docs/testing.md, One browser for the dashboard project).
   */
  async close(test?: TestContext): Promise<void> {
    if (this.current === null) return;
    const { context, page, errors } = this.current;
    this.current = null;
    if (LAST_STATE_ALWAYS || errors.length > 0 || test?.task.result?.state === 'fail') {
      await screenshot(page, this.name).catch(() => undefined);
    }
    await context.close();
    expect(errors, 'errors in the browser console').toEqual([]);
  }
}

export interface DashboardSuite {
  /** The file's one page at a time (`discard` for a test that moves on to another page). */
  pages: PageSlot;
  /** A new page named `name`, signed in, at `/dashboard/${hash}`. */
  open(name: string, hash: string): Promise<Page>;
}

/**
 * The set-up a describe block of browser tests shares, registered on it (call it inside the `describe`): before all,
 * a dashboard gateway and the browser, then `setUp` with the gateway (the file's devices, messages, groups); after
 * each test, the page slot closed (photographed, console checked); after all, the browser and the gateway closed.
 */
export function dashboardSuite(setUp: (gw: TestGateway) => Promise<void> = async () => undefined): DashboardSuite {
  let gw: TestGateway | undefined;
  let base = '';
  let browser: Browser | undefined;
  const pages = new PageSlot(
    () => {
      if (browser === undefined) throw new Error('the browser is not launched');
      return browser;
    },
    () => base,
  );
  beforeAll(async () => {
    const started = await startDashboardGateway();
    gw = started.gw;
    base = started.base;
    browser = await connectBrowser();
    await setUp(gw);
  });
  afterAll(async () => {
    await browser?.close();
    await gw?.close();
  });
  afterEach((test) => pages.close(test));
  return {
    pages,
    open: (name, hash) => pages.openSignedIn(name, hash),
  };
}

export async function screenshot(page: Page, name: string): Promise<void> {
  await mkdir(SCREENSHOT_DIR, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOT_DIR, `${safeName(name)}.png`), fullPage: true });
}

/** The guide's pictures (docs/guide.md), when DASHBOARD_SCREENSHOTS is set. */
export async function docsScreenshot(page: Page, file: string): Promise<void> {
  if (!DOCS_SCREENSHOTS) return;
  await page.screenshot({ path: join(ROOT, 'docs', file) });
}

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: Array<{ target: unknown; failureSummary?: string }>;
}

/** Runs axe-core on the page as it is now; returns the serious and critical violations. */
export async function seriousViolations(page: Page): Promise<AxeViolation[]> {
  // Evaluated in the page (strings: this file is type-checked without the DOM's types).
  // Evaluated through the debugging protocol rather than added as a <script>: the dashboard's CSP (rightly)
  // refuses inline scripts, and the tests keep that CSP on, so a violation by the app itself would show.
  if (!(await page.evaluate<boolean>("'axe' in window"))) await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate<unknown[]>(
    "axe.run(document, { resultTypes: ['violations'] }).then((result) => result.violations)",
  );
  return (violations as AxeViolation[]).filter((v) => v.impact === 'serious' || v.impact === 'critical');
}

/** A real HTTP server on 127.0.0.1 that takes webhook deliveries and remembers them (bodies and headers). */
export async function startReceiver(): Promise<{
  url: string;
  bodies: unknown[];
  /** The request headers of each delivery, in the order of `bodies`. */
  headers: IncomingHttpHeaders[];
  /** Each delivery's body as sent (what its signature covers), in the order of `bodies`. */
  raw: string[];
  close(): Promise<void>;
}> {
  const bodies: unknown[] = [];
  const headers: IncomingHttpHeaders[] = [];
  const raw: string[] = [];
  const server: Server = createServer((req, res) => {
    let text = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (text += chunk));
    req.on('end', () => {
      headers.push(req.headers);
      raw.push(text);
      try {
        bodies.push(JSON.parse(text));
      } catch {
        bodies.push(text);
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return {
    url: `http://127.0.0.1:${address.port}/hooks`,
    bodies,
    headers,
    raw,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
