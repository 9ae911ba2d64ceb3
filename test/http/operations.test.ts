// docs/internals.md, Running and operating: health, readiness, metrics, the OpenAPI document and the docs page.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { noStoreAvailable, startGateway, type TestGateway } from '../helpers/gateway.js';

describe.skipIf(noStoreAvailable)('operations endpoints', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway();
  });
  afterAll(() => gw?.close());

  it('answers /healthz and /readyz without a token', async () => {
    expect((await gw.request('GET', '/healthz', undefined, null)).body).toEqual({
      code: 200,
      status: 200,
      message: 'OK',
    });
    expect((await gw.request('GET', '/readyz', undefined, null)).body).toEqual({
      code: 200,
      status: 200,
      message: 'Ready',
    });
  });

  it('serves Prometheus metrics to token holders only', async () => {
    await gw.request('GET', '/devices');
    const res = await gw.app.inject({
      method: 'GET',
      url: '/metrics',
      headers: { authorization: `Bearer ${'mgw_test_token_for_the_default_account_0000'}` },
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toContain('text/plain');
    expect(res.body).toContain('gateway_http_requests_total{method="GET",route="/devices",status="200"}');
    expect((await gw.request('GET', '/metrics', undefined, null)).status).toBe(401);
  });

  it('publishes an OpenAPI 3.1 document generated from the route schemas, each route once', async () => {
    const res = await gw.request('GET', '/openapi.json', undefined, null);
    expect(res.status).toBe(200);
    const doc = res.body;
    expect(doc.openapi).toBe('3.1.0');
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining(['/devices', '/devices/{id}', '/tokens', '/tokens/{id}', '/healthz', '/readyz']),
    );
    // Only members add is documented under /api: that is its spec path (spec 4.7).
    expect(Object.keys(doc.paths).filter((path) => path.startsWith('/api/'))).toEqual([
      '/api/groups/{group_id}/members/add',
    ]);
    const create = doc.paths['/devices'].post;
    expect(create.requestBody.content['application/json'].schema.properties.package.enum).toEqual([
      'BETA',
      'STARTER60K',
      'STARTUP240K',
      'BUSINESS',
    ]);
    expect(Object.keys(create.responses)).toEqual(expect.arrayContaining(['201', '400', '401', '403']));
    expect(doc.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
  });

  it('serves /healthz, /readyz, /metrics and /openapi.json under /api too (docs/internals.md, Answers and errors), the alias undocumented', async () => {
    expect(await gw.request('GET', '/api/healthz', undefined, null)).toMatchObject({
      status: 200,
      body: { code: 200, status: 200, message: 'OK' },
    });
    expect(await gw.request('GET', '/api/readyz', undefined, null)).toMatchObject({
      status: 200,
      body: { code: 200, status: 200, message: 'Ready' },
    });
    const metrics = await gw.request('GET', '/api/metrics');
    expect(metrics.status).toBe(200);
    expect(String(metrics.body)).toContain('gateway_http_requests_total');
    expect(await gw.request('GET', '/api/metrics', undefined, null)).toMatchObject({
      status: 401,
      body: { code: 401, status: 401, message: 'Unauthorized' },
    });
    const doc = await gw.request('GET', '/api/openapi.json', undefined, null);
    expect(doc.status).toBe(200);
    expect(doc.body).toEqual((await gw.request('GET', '/openapi.json', undefined, null)).body);
    expect(Object.keys(doc.body.paths)).not.toContain('/api/healthz');
    expect(Object.keys(doc.body.paths)).not.toContain('/api/metrics');
  });

  it('documents no query parameter that has a default as required', async () => {
    const doc = (await gw.request('GET', '/openapi.json', undefined, null)).body;
    const withDefaults: string[] = [];
    for (const [path, operations] of Object.entries<Record<string, any>>(doc.paths)) {
      for (const [method, operation] of Object.entries<any>(operations)) {
        for (const parameter of operation.parameters ?? []) {
          if (parameter.in !== 'query' || parameter.schema?.default === undefined) continue;
          withDefaults.push(`${method} ${path} ${parameter.name}`);
          expect(parameter.required, `${method} ${path} ${parameter.name}`).not.toBe(true);
        }
      }
    }
    expect(withDefaults).toEqual(
      expect.arrayContaining(['get /devices page', 'get /devices per_page', 'get /messages limit']),
    );
    // A parameter without a default that the route needs stays required.
    const qr = doc.paths['/devices/{id}/qr'].get.parameters.find((p: { name: string }) => p.name === 'response_type');
    expect(qr.required).toBe(true);
  });

  it('serves interactive docs at /docs', async () => {
    const res = await gw.app.inject({ method: 'GET', url: '/docs/' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toContain('text/html');
    expect(res.body.toLowerCase()).toContain('swagger');
  });
});
