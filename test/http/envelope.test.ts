// docs/internals.md, Answers and errors: every answer, including framework-level failures, is in the envelope.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_TOKEN, noStoreAvailable, startGateway, type TestGateway } from '../helpers/gateway.js';

describe.skipIf(noStoreAvailable)('response envelope', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway();
  });
  afterAll(() => gw?.close());

  const auth = { authorization: `Bearer ${TEST_TOKEN}` };

  it('answers an unknown route with 404 Not found', async () => {
    const res = await gw.request('GET', '/no/such/route');
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ code: 404, status: 404, message: 'Not found' });
  });

  it('answers malformed JSON with 400 Invalid JSON body', async () => {
    const res = await gw.app.inject({
      method: 'POST',
      url: '/devices',
      headers: { ...auth, 'content-type': 'application/json' },
      payload: '{"package": "BETA",',
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ code: 400, status: 400, message: 'Invalid JSON body' });
  });

  it('answers an empty JSON body with 400 Invalid JSON body', async () => {
    const res = await gw.app.inject({
      method: 'POST',
      url: '/devices',
      headers: { ...auth, 'content-type': 'application/json' },
      payload: '',
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ code: 400, status: 400, message: 'Invalid JSON body' });
  });

  it('refuses a JSON body that tries prototype poisoning', async () => {
    const res = await gw.app.inject({
      method: 'POST',
      url: '/devices',
      headers: { ...auth, 'content-type': 'application/json' },
      payload: '{"package":"BETA","name":"x","__proto__":{"admin":true}}',
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().code).toBe(400);
  });

  // Forms are taken too (docs/internals.md, Whatspie compatibility; test/http/forms.test.ts).
  it.each(['text/plain', 'application/xml', 'application/octet-stream', 'text/html; charset=utf-8'])(
    'answers content type %s with 415 Unsupported media type',
    async (type) => {
      const res = await gw.app.inject({
        method: 'POST',
        url: '/devices',
        headers: { ...auth, 'content-type': type },
        payload: 'package=BETA&name=x',
      });
      expect(res.statusCode).toBe(415);
      expect(res.json()).toEqual({ code: 415, status: 415, message: 'Unsupported media type' });
    },
  );

  it('accepts a JSON content type with a charset', async () => {
    const res = await gw.app.inject({
      method: 'POST',
      url: '/devices',
      headers: { ...auth, 'content-type': 'application/json; charset=utf-8' },
      payload: JSON.stringify({ package: 'BETA', name: 'charset' }),
    });
    expect(res.statusCode).toBe(201);
  });

  it('answers a body over 1 MB with 413 Payload too large, and takes one just under', async () => {
    const over = JSON.stringify({ package: 'BETA', name: 'x', pad: 'a'.repeat(1024 * 1024) });
    const res = await gw.app.inject({
      method: 'POST',
      url: '/devices',
      headers: { ...auth, 'content-type': 'application/json' },
      payload: over,
    });
    expect(res.statusCode).toBe(413);
    expect(res.json()).toEqual({ code: 413, status: 413, message: 'Payload too large' });

    const base = JSON.stringify({ package: 'BETA', name: 'x', pad: '' });
    const under = JSON.stringify({ package: 'BETA', name: 'x', pad: 'a'.repeat(1024 * 1024 - base.length) });
    expect(Buffer.byteLength(under)).toBe(1024 * 1024);
    const ok = await gw.app.inject({
      method: 'POST',
      url: '/devices',
      headers: { ...auth, 'content-type': 'application/json' },
      payload: under,
    });
    expect(ok.statusCode).toBe(201);
  });

  it('answers a wrong method on a known path with 405 and an Allow header', async () => {
    const res = await gw.request('PUT', '/devices');
    expect(res.status).toBe(405);
    expect(res.body).toEqual({ code: 405, status: 405, message: 'Method not allowed' });
    expect(String(res.headers.allow).split(', ').sort()).toEqual(['GET', 'POST']);

    const one = await gw.request('POST', '/devices/1');
    expect(one.status).toBe(405);
    expect(String(one.headers.allow).split(', ').sort()).toEqual(['DELETE', 'GET', 'PATCH']);
  });

  it('answers a structurally invalid body with 400 Validation failed naming every field', async () => {
    const res = await gw.request('POST', '/tokens', { name: 5, extra: true });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      code: 400,
      status: 400,
      message: 'Validation failed',
      errors: { name: ['must be a string'] },
    });

    const missing = await gw.request('POST', '/tokens', {});
    expect(missing.body).toEqual({
      code: 400,
      status: 400,
      message: 'Validation failed',
      errors: { name: ['is required'] },
    });

    const notObject = await gw.request('POST', '/tokens', [1, 2]);
    expect(notObject.status).toBe(400);
    expect(notObject.body.message).toBe('Validation failed');
  });

  it('serves every API route under /api too', async () => {
    const plain = await gw.request('GET', '/devices');
    const prefixed = await gw.request('GET', '/api/devices');
    expect(prefixed.status).toBe(200);
    expect(prefixed.body).toEqual(plain.body);
    const tokens = await gw.request('GET', '/api/tokens');
    expect(tokens.status).toBe(200);
  });

  it('gives every answer a request id, and echoes a sane one given by the caller', async () => {
    const res = await gw.request('GET', '/healthz');
    const other = await gw.request('GET', '/healthz');
    expect(String(res.headers['x-request-id'])).toMatch(/^[0-9a-f]{8}-[0-9a-z]+$/);
    expect(other.headers['x-request-id']).not.toBe(res.headers['x-request-id']);
    const given = await gw.app.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': 'abc-123' } });
    expect(given.headers['x-request-id']).toBe('abc-123');
    const bad = await gw.app.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': 'a b\u0001' } });
    expect(bad.headers['x-request-id']).not.toBe('a b\u0001');
  });
});

describe.skipIf(noStoreAvailable)('when the store fails', () => {
  it('answers 500 Internal server error with no internal detail, and /readyz 503', async () => {
    const gw = await startGateway();
    try {
      await gw.app.ready();
      await gw.app.store.close();
      const res = await gw.request('GET', '/devices');
      expect(res.status).toBe(500);
      expect(res.body).toEqual({ code: 500, status: 500, message: 'Internal server error' });
      const ready = await gw.request('GET', '/readyz', undefined, null);
      expect(ready.status).toBe(503);
      expect(ready.body).toEqual({ code: 503, status: 503, message: 'Not ready', error: 'the store does not answer' });
      const health = await gw.request('GET', '/healthz', undefined, null);
      expect(health.body).toEqual({ code: 200, status: 200, message: 'OK' });
    } finally {
      await gw.close();
    }
  });
});

// docs/internals.md, Whatspie compatibility: every JSON answer carries both `code` and `status`, the same integer as the HTTP status.
describe.skipIf(noStoreAvailable)('code and status in every answer', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway();
  });
  afterAll(() => gw?.close());

  it('answers success and error bodies of every kind with code equal to status', async () => {
    const created = await gw.request('POST', '/devices', { name: 'twin', package: 'BETA' });
    const id = (created.body as { data: { id: number } }).data.id;
    const answers = [
      created,
      await gw.request('GET', '/devices'),
      await gw.request('GET', `/devices/${id}`),
      await gw.request('GET', `/devices/${id}/qr`),
      await gw.request('GET', '/groups'),
      await gw.request('GET', '/messages'),
      await gw.request('GET', '/tokens'),
      await gw.request('GET', '/healthz', undefined, null),
      await gw.request('GET', '/devices/999999'),
      await gw.request('POST', '/messages', { device: 'none', receiver: '1', type: 'chat', params: { text: 'x' } }),
      await gw.request('GET', '/devices', undefined, null),
    ];
    for (const answer of answers) {
      const body = answer.body as { code: unknown; status: unknown };
      expect({ code: body.code, status: body.status }).toEqual({ code: answer.status, status: answer.status });
    }
  });

  it('documents both fields as required in every JSON answer of the OpenAPI document', async () => {
    const doc = (await gw.request('GET', '/openapi.json', undefined, null)).body as {
      paths: Record<
        string,
        Record<string, { responses?: Record<string, { content?: Record<string, { schema: unknown }> }> }>
      >;
    };
    const lacking: string[] = [];
    const check = (where: string, schema: unknown): void => {
      const s = schema as {
        properties?: Record<string, unknown>;
        required?: string[];
        oneOf?: unknown[];
        anyOf?: unknown[];
      };
      for (const branch of [...(s.oneOf ?? []), ...(s.anyOf ?? [])]) check(where, branch);
      if (s.properties?.code === undefined && s.properties?.status === undefined) return;
      if (!(s.required ?? []).includes('code') || !(s.required ?? []).includes('status')) lacking.push(where);
    };
    for (const [path, operations] of Object.entries(doc.paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        for (const [status, response] of Object.entries(operation.responses ?? {})) {
          const schema = response.content?.['application/json']?.schema;
          if (schema !== undefined) check(`${method.toUpperCase()} ${path} ${status}`, schema);
        }
      }
    }
    expect(lacking).toEqual([]);
  });
});
