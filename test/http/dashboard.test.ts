// docs/internals.md, The dashboard: the gateway serves the dashboard at /dashboard (`/` redirects
// there) with caching headers fit for a hashed build, needs no token for the
// page itself, and gives the dashboard what it needs through public routes:
// `GET /gateway` for the banner, and the end of the pairing window with the QR.
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DASHBOARD_CSP } from '../../src/http/dashboard.js';
import { noStoreAvailable, startGateway, type TestGateway } from '../helpers/gateway.js';

const INDEX =
  '<!doctype html><title>dashboard</title><script type="module" src="/dashboard/assets/app-1a2b3c.js"></script>';
const SCRIPT = 'console.log("dashboard");';

describe.skipIf(noStoreAvailable)('the dashboard’s routes', () => {
  let gw: TestGateway;
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gw-dashboard-'));
    await mkdir(join(dir, 'assets'));
    await writeFile(join(dir, 'index.html'), INDEX);
    await writeFile(join(dir, 'assets', 'app-1a2b3c.js'), SCRIPT);
    gw = await startGateway({ build: { dashboardDir: dir } });
  });
  afterAll(async () => {
    await gw?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('redirects / to /dashboard/', async () => {
    const res = await gw.app.inject({ method: 'GET', url: '/' });
    expect(res.statusCode).toBe(302);
    expect(res.headers.location).toBe('/dashboard/');
    expect(res.json()).toEqual({ code: 302, status: 302, message: 'Found: the dashboard is at /dashboard/' });
    // Dot segments resolve to / as well: still the same answer, in the envelope.
    const dotted = await gw.app.inject({ method: 'GET', url: '/devices/%2e%2e/%2e%2e' });
    expect(dotted.statusCode).toBe(302);
    expect(dotted.json()).toMatchObject({ code: 302 });
  });

  it.each(['/dashboard', '/dashboard/', '/dashboard/index.html'])(
    'serves index.html at %s without a token, revalidated on every load',
    async (url) => {
      const res = await gw.app.inject({ method: 'GET', url });
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toMatch(/^text\/html/);
      expect(res.headers['cache-control']).toBe('no-cache');
      // The page holds a token: only its own scripts run, it talks to its own origin, nobody frames it.
      expect(res.headers['content-security-policy']).toBe(DASHBOARD_CSP);
      expect(DASHBOARD_CSP).toContain("script-src 'self'");
      expect(DASHBOARD_CSP).toContain("frame-ancestors 'none'");
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      expect(res.headers['referrer-policy']).toBe('no-referrer');
      expect(res.body).toBe(INDEX);
    },
  );

  it('serves hashed assets as immutable', async () => {
    const res = await gw.app.inject({ method: 'GET', url: '/dashboard/assets/app-1a2b3c.js' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/javascript/);
    expect(res.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(res.body).toBe(SCRIPT);
  });

  it('answers an unknown file with 404 in the envelope, and never serves outside the build', async () => {
    const missing = await gw.app.inject({ method: 'GET', url: '/dashboard/assets/nope.js' });
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toMatchObject({ code: 404, status: 404, message: 'Not found' });
    for (const url of [
      '/dashboard/../package.json',
      '/dashboard/%2e%2e/package.json',
      '/dashboard/..%2fpackage.json',
    ]) {
      const res = await gw.app.inject({ method: 'GET', url });
      expect(res.statusCode, url).not.toBe(200);
      expect(res.body).not.toContain('"name": "messaging-gateway"');
    }
  });

  it('keeps the API behind the token', async () => {
    const res = await gw.app.inject({ method: 'GET', url: '/devices' });
    expect(res.statusCode).toBe(401);
  });

  it('GET /gateway names the network, the node and the version, with a token only', async () => {
    const res = await gw.request('GET', '/gateway');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      code: 200,
      status: 200,
      message: 'OK',
      data: {
        network: 'sandbox',
        sandbox_control: true,
        // The sandbox is the network here: every account is a sandbox account (docs/internals.md, WhatsApp and sandbox accounts).
        account: { name: 'default', sandbox: true },
        server: { name: 'test-node' },
      },
    });
    expect(res.body.data.version).toMatch(/^\d+\.\d+\.\d+/);
    expect(Object.keys(res.body.data).sort()).toEqual([
      'account',
      'brokers',
      'device_webhooks',
      'network',
      'sandbox_control',
      'server',
      'streams',
      'version',
      'webhooks',
    ]);
    // No broker configured here (docs/brokers.md), no webhook and no stream consumer of this account.
    expect(res.body.data.brokers).toEqual([]);
    expect(res.body.data.webhooks).toEqual([]);
    expect(res.body.data.device_webhooks).toEqual([]);
    expect(res.body.data.streams).toEqual({ sse: 0, websocket: 0 });
    expect((await gw.request('GET', '/api/gateway')).status).toBe(200);
    const anonymous = await gw.request('GET', '/gateway', undefined, null);
    expect(anonymous.status).toBe(401);
    const doc = await gw.request('GET', '/openapi.json');
    expect(doc.body.paths['/gateway']?.get).toBeDefined();
    expect(doc.body.paths['/devices/{id}/restart']?.post).toBeDefined();
    expect(doc.body.paths['/dashboard']).toBeUndefined();
  });

  it('gives the end of the pairing window with the QR', async () => {
    const created = await gw.request('POST', '/devices', { package: 'BETA', name: 'window' });
    const before = Date.now();
    const res = await gw.request('GET', `/devices/${created.body.data.id}/qr?response_type=url`);
    expect(res.status).toBe(200);
    const ends = Date.parse(res.body.data.expires_at);
    const windowMs = gw.config.pairingWindowS * 1000;
    expect(ends).toBeGreaterThanOrEqual(before + windowMs - 5_000);
    expect(ends).toBeLessThanOrEqual(Date.now() + windowMs);
    // The same attempt, the same window, however often the QR is asked for.
    const again = await gw.request('GET', `/devices/${created.body.data.id}/qr?response_type=url`);
    expect(again.body.data.expires_at).toBe(res.body.data.expires_at);
  });
});

describe.skipIf(noStoreAvailable)('a gateway whose dashboard is not built', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway({ build: { dashboardDir: join(tmpdir(), 'gw-no-dashboard-here') } });
  });
  afterAll(() => gw?.close());

  it('says how to build it', async () => {
    const res = await gw.app.inject({ method: 'GET', url: '/dashboard/' });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({
      code: 404,
      status: 404,
      message: 'Not found',
      error: 'the dashboard is not built: run npm run build:web',
    });
  });
});
