// Bad input never produces a 500: random bodies and ids thrown at the group and contact routes, against a real
// group whose device is connected and admin, always get a well-formed envelope below 500.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { TEST_TOKEN, noStoreAvailable, startGateway, type TestGateway } from '../helpers/gateway.js';
import { createPairedDevice } from '../helpers/pairing.js';
import { adminGroup, numbers } from './helpers.js';

const DEVICE = '6283599000001';
const phoneLike = fc.oneof(
  fc.stringMatching(/^[0-9+ -]{0,17}$/),
  fc.constantFrom(DEVICE, '6283512340000', '6283512340004', '0', ''),
  fc.jsonValue({ maxDepth: 1 }),
);
const list = (max: number) => fc.oneof(fc.array(phoneLike, { maxLength: max }), fc.jsonValue({ maxDepth: 2 }));
const json = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }),
  fc.record(
    {
      participants: list(25),
      phones: list(110),
      device: phoneLike,
      name: fc.oneof(fc.string({ maxLength: 120 }), fc.jsonValue({ maxDepth: 1 })),
      subject: fc.oneof(fc.string({ maxLength: 120 }), fc.jsonValue({ maxDepth: 1 })),
      description: fc.oneof(fc.string({ maxLength: 40 }), fc.jsonValue({ maxDepth: 1 })),
      type: fc.oneof(fc.constantFrom('chat', 'image', 'list', 'nope'), fc.jsonValue({ maxDepth: 1 })),
      params: fc.jsonValue({ maxDepth: 2 }),
      message: fc.jsonValue({ maxDepth: 1 }),
    },
    { requiredKeys: [] },
  ),
);
const body = fc.oneof(
  json.map((value) => JSON.stringify(value)),
  fc.string({ maxLength: 40 }),
  fc.constant(''),
);

describe.skipIf(noStoreAvailable)('group and contact routes under random input', () => {
  let gw: TestGateway;
  let groupId = 0;
  // A clock that jumps a day per run keeps the limits from turning every later answer into a 429.
  const clock = new ManualClock(Date.UTC(2026, 6, 1));
  beforeAll(async () => {
    gw = await startGateway({ clock });
    await createPairedDevice(gw, DEVICE);
    groupId = (await adminGroup(gw, DEVICE, 'Fuzzed', numbers('62835')(2))).id;
  });
  afterAll(() => gw?.close());

  it('always answer a well-formed envelope below 500', async () => {
    const id = fc.oneof(
      fc.constant(() => String(groupId)),
      fc.constantFrom('0', '-1', 'abc', '1.5', '99999999999999999999', '%00').map((s) => () => s),
    );
    const route = fc.oneof(
      id.map((g) => ['POST', () => `/api/groups/${g()}/members/add`] as const),
      id.map((g) => ['POST', () => `/groups/${g()}/members/add`] as const),
      id.map((g) => ['PUT', () => `/groups/${g()}`] as const),
      id.map((g) => ['POST', () => `/groups/${g()}/send`] as const),
      id.map((g) => ['GET', () => `/groups/${g()}`] as const),
      fc.constant(['POST', () => '/groups'] as const),
      fc.constant(['POST', () => '/contacts/check'] as const),
      fc.string({ maxLength: 16 }).map((q) => ['GET', () => `/groups?device=${encodeURIComponent(q)}`] as const),
    );
    await fc.assert(
      fc.asyncProperty(route, body, async ([method, url], payload) => {
        clock.advance(86_400_000);
        const res = await gw.app.inject({
          method,
          url: url(),
          headers: { authorization: `Bearer ${TEST_TOKEN}`, 'content-type': 'application/json' },
          ...(method === 'GET' ? {} : { payload }),
        });
        expect(res.statusCode, res.body).toBeLessThan(500);
        const parsed = JSON.parse(res.body) as Record<string, unknown>;
        expect(parsed.code).toBe(res.statusCode);
        expect(typeof parsed.message).toBe('string');
      }),
      { numRuns: 300 },
    );
  });
});
