// docs/internals.md, Accounts and tokens: every route needs a token; every failure mode is the same 401.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_TOKEN, noStoreAvailable, startGateway, type TestGateway } from '../helpers/gateway.js';

const PUBLIC = new Set(['/healthz', '/readyz', '/openapi.json', '/api/healthz', '/api/readyz', '/api/openapi.json']);
const isPublicPath = (url: string) =>
  PUBLIC.has(url) ||
  url === '/docs' ||
  url.startsWith('/docs/') ||
  // The dashboard's page and files; everything it shows comes from the token-checked API.
  url === '/' ||
  url === '/dashboard' ||
  url.startsWith('/dashboard/');

describe.skipIf(noStoreAvailable)('authentication', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway();
  });
  afterAll(() => gw?.close());

  const unauthorized = { code: 401, status: 401, message: 'Unauthorized' };

  it.each([
    ['no header', undefined],
    ['empty header', ''],
    ['wrong scheme', `Basic ${TEST_TOKEN}`],
    ['bearer without token', 'Bearer '],
    ['token too short', 'Bearer abc'],
    ['unknown token', 'Bearer mgw_this_token_does_not_exist_anywhere_0000'],
    ['token with trailing junk', `Bearer ${TEST_TOKEN} extra`],
    ['token with a control character', `Bearer mgw_\u0001${TEST_TOKEN}`],
  ])('answers 401 for %s', async (_label, header) => {
    const res = await gw.app.inject({
      method: 'GET',
      url: '/devices',
      headers: header === undefined ? {} : { authorization: header },
    });
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual(unauthorized);
    // RFC 9110: a 401 names the scheme it would accept (newcomer F16).
    expect(res.headers['www-authenticate']).toBe('Bearer');
  });

  it('accepts the scheme in any case', async () => {
    const res = await gw.app.inject({
      method: 'GET',
      url: '/devices',
      headers: { authorization: `bearer ${TEST_TOKEN}` },
    });
    expect(res.statusCode).toBe(200);
  });

  it('answers 401 for a revoked token at once', async () => {
    const created = await gw.request('POST', '/tokens', { name: 'short-lived' });
    const secret = created.body.data.token as string;
    expect((await gw.request('GET', '/devices', undefined, secret)).status).toBe(200);
    expect((await gw.request('DELETE', `/tokens/${created.body.data.id}`)).status).toBe(200);
    const after = await gw.request('GET', '/devices', undefined, secret);
    expect(after.status).toBe(401);
    expect(after.body).toEqual(unauthorized);
  });

  it('checks the token before reading the body', async () => {
    const res = await gw.app.inject({
      method: 'POST',
      url: '/devices',
      headers: { 'content-type': 'application/json' },
      payload: '{not json',
    });
    expect(res.statusCode).toBe(401);
  });

  it('every registered route except health, readiness, OpenAPI and docs answers 401 without a token', async () => {
    const routes = gw.app.routeCatalog.filter((route) => route.method !== 'HEAD' && route.method !== 'OPTIONS');
    expect(routes.length).toBeGreaterThan(10);
    const checked: string[] = [];
    for (const route of routes) {
      // Incoming media takes a token or a signed URL: the route checks which (test/media/incoming.test.ts), and
      // without either answers the same 401.
      const selfChecked = route.url === '/media/:media_id' || route.url === '/api/media/:media_id';
      if (isPublicPath(route.url)) {
        expect(route.public, `${route.method} ${route.url} should be public`).toBe(true);
        continue;
      }
      expect(route.public, `${route.method} ${route.url} must not be public`).toBe(selfChecked);
      const url = route.url.replace(/:[A-Za-z_]+/g, '1').replace(/\*/g, 'x');
      const res = await gw.app.inject({
        method: route.method as 'GET',
        url,
        ...(route.method === 'GET' || route.method === 'DELETE' ? {} : { payload: {} }),
      });
      expect(res.statusCode, `${route.method} ${route.url}`).toBe(401);
      expect(res.json(), `${route.method} ${route.url}`).toEqual(unauthorized);
      checked.push(`${route.method} ${route.url}`);
    }
    expect(checked).toContain('GET /devices');
    expect(checked).toContain('GET /api/devices');
    expect(checked).toContain('GET /metrics');
    expect(checked).toContain('GET /api/metrics');
  });

  it('serves the public routes without a token', async () => {
    for (const url of [
      '/healthz',
      '/readyz',
      '/openapi.json',
      '/docs/',
      '/api/healthz',
      '/api/readyz',
      '/api/openapi.json',
    ]) {
      const res = await gw.app.inject({ method: 'GET', url });
      expect(res.statusCode, url).toBe(200);
    }
  });
});
