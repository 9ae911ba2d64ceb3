// Bad input never produces a 500 or a crash: random bodies, headers and paths
// thrown at the device routes always get a well-formed envelope below 500.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_TOKEN, noStoreAvailable, startGateway, type TestGateway } from '../helpers/gateway.js';

const segment = fc.oneof(
  fc.constantFrom('1', '0', '-1', '99999999999999999999', 'abc', '%00', '%2e%2e', '..', 'qr', '1.5', ' ', '%'),
  fc.string({ maxLength: 12 }).map(encodeURIComponent),
);
const path = fc.oneof(
  fc.constant('/devices'),
  fc.constant('/api/devices'),
  segment.map((s) => `/devices/${s}`),
  fc.tuple(segment, segment).map(([a, b]) => `/devices/${a}/${b}`),
  fc
    .tuple(fc.constantFrom('', '?', '?page=', '?per_page=x&page=', '?page=1&page=2'), fc.string({ maxLength: 10 }))
    .map(([q, v]) => `/devices${q}${encodeURIComponent(v)}`),
);
const method = fc.constantFrom('GET', 'POST', 'PATCH', 'DELETE', 'PUT');
const contentType = fc.constantFrom(
  'application/json',
  'application/json; charset=utf-8',
  'text/plain',
  'application/octet-stream',
  '',
  'application/json; charset=latin1',
  'APPLICATION/JSON',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
);
const json = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }),
  fc.record(
    {
      package: fc.oneof(fc.constantFrom('BETA', 'BUSINESS', 'STARTER60K'), fc.jsonValue({ maxDepth: 1 })),
      name: fc.oneof(fc.string({ maxLength: 120 }), fc.jsonValue({ maxDepth: 1 })),
      phone: fc.oneof(fc.stringMatching(/^[0-9+ -]{0,17}$/), fc.jsonValue({ maxDepth: 1 })),
      webhook_url: fc.oneof(fc.webUrl(), fc.string({ maxLength: 30 }), fc.constant(null)),
    },
    { requiredKeys: [] },
  ),
);
const body = fc.oneof(
  json.map((value) => JSON.stringify(value)),
  fc.string({ maxLength: 60 }),
  fc.uint8Array({ maxLength: 60 }).map((bytes) => Buffer.from(bytes).toString('latin1')),
  fc.constant(''),
);
const authorization = fc.oneof(
  fc.constant(`Bearer ${TEST_TOKEN}`),
  fc.constant(`Bearer ${TEST_TOKEN}`),
  fc.string({ maxLength: 40 }),
  fc.constant(undefined),
);

describe.skipIf(noStoreAvailable)('device routes under random input', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway();
    await gw.app.services.accounts.setMaxDevices('default', 100_000);
  });
  afterAll(() => gw?.close());

  it('always answer a well-formed envelope below 500', async () => {
    await fc.assert(
      fc.asyncProperty(method, path, contentType, body, authorization, async (m, url, type, payload, auth) => {
        const headers: Record<string, string> = {};
        if (type !== '') headers['content-type'] = type;
        if (auth !== undefined) headers.authorization = auth;
        const res = await gw.app.inject({
          method: m as 'GET',
          url,
          headers,
          ...(m === 'GET' ? {} : { payload }),
        });
        expect(res.statusCode).toBeLessThan(500);
        expect(res.statusCode).toBeGreaterThanOrEqual(200);
        const parsed = JSON.parse(res.body) as Record<string, unknown>;
        expect({ code: parsed.code, status: parsed.status }).toEqual({ code: res.statusCode, status: res.statusCode });
        expect(typeof parsed.message).toBe('string');
        if (res.statusCode >= 400) {
          expect(
            Object.keys(parsed).every((key) => ['code', 'status', 'message', 'error', 'errors'].includes(key)),
          ).toBe(true);
        }
      }),
      { numRuns: 400 },
    );
    // The store is intact afterwards.
    expect((await gw.request('GET', '/readyz', undefined, null)).status).toBe(200);
  });
});
