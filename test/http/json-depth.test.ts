// Issue 10 item 1: JSON nesting is bounded before parsing. A body of a hundred thousand nested
// arrays is refused at once with a clear 400 (never parsed for hundreds of milliseconds, never a
// stack overflow in a recursive walk such as the idempotency hash), and ordinary nesting passes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_JSON_DEPTH, nestsDeeperThan } from '../../src/http/json-depth.js';
import { noStoreAvailable, startGateway, TEST_TOKEN, type TestGateway } from '../helpers/gateway.js';

const deep = (levels: number) => `${'['.repeat(levels)}${']'.repeat(levels)}`;
const refusal = `must not nest objects and arrays more than ${MAX_JSON_DEPTH} levels deep`;

describe('nestsDeeperThan', () => {
  it('counts objects and arrays, not brackets inside strings', () => {
    expect(nestsDeeperThan(deep(32), 32)).toBe(false);
    expect(nestsDeeperThan(deep(33), 32)).toBe(true);
    expect(nestsDeeperThan(`{"a":"${'['.repeat(100)}"}`, 2)).toBe(false);
    expect(nestsDeeperThan(`{"a":"\\"${'{'.repeat(100)}"}`, 2)).toBe(false);
    expect(nestsDeeperThan('{"a":{"b":[{}]}}', 3)).toBe(true);
    expect(nestsDeeperThan('{"a":{"b":[1]}}', 3)).toBe(false);
  });
});

describe.skipIf(noStoreAvailable)('deeply nested bodies', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway();
  });
  afterAll(() => gw?.close());

  const post = (payload: string, headers: Record<string, string> = {}) =>
    gw.app.inject({
      method: 'POST',
      url: '/messages',
      headers: { authorization: `Bearer ${TEST_TOKEN}`, 'content-type': 'application/json', ...headers },
      payload,
    });

  it.each([
    ['without', {}],
    ['with', { 'idempotency-key': 'deep-1' }],
  ])('refuses 100,000 levels %s an Idempotency-Key as Validation failed', async (_label, headers) => {
    const payload = `{"device":"6281234567890","receiver":"6289876543210","type":"chat","params":{"text":"hi"},"x":${deep(100_000)}}`;
    const res = await post(payload, headers);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ code: 400, status: 400, message: 'Validation failed', errors: { body: [refusal] } });
  });

  it('takes a body nested to the limit as any other', async () => {
    // 1 (the body) + 31 levels in an unknown field: the limit exactly; answered past parsing.
    const payload = `{"device":"6281234567890","receiver":"6289876543210","type":"chat","params":{"text":"hi"},"x":${deep(31)}}`;
    const res = await post(payload, { 'idempotency-key': 'deep-2' });
    expect(res.json()).toMatchObject({ code: 404, status: 404, message: 'Device not found' });
  });
});
