// Form bodies under random input (docs/internals.md, Whatspie compatibility): PHP-style names with random brackets, indexes,
// prototype names and nesting past the limit, values with broken percent-encoding, multipart bodies
// with random parts, file parts and cut-off ends, thrown at every route that takes a body. Every
// answer is a well-formed envelope below 500, and no object's prototype is ever touched.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LookupFunction } from 'node:net';
import { TEST_TOKEN, noStoreAvailable, startGateway, type TestGateway } from '../helpers/gateway.js';
import { createPairedDevice } from '../helpers/pairing.js';

const DEVICE = '6285900000071';

// No name resolves: a media URL the fuzzer writes is refused without leaving the machine.
const nowhere: LookupFunction = (hostname, _options, callback) =>
  setImmediate(() =>
    callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }), '', 4),
  );

const routes = fc.constantFrom(
  ['POST', '/messages'],
  ['POST', '/api/messages'],
  ['POST', '/devices'],
  ['PATCH', '/devices/1'],
  ['POST', '/devices/1/pairing-code'],
  ['POST', '/contacts/check'],
  ['POST', '/groups'],
  ['PUT', '/groups/1'],
  ['POST', '/groups/1/send'],
  ['POST', '/api/groups/1/members/add'],
  ['POST', '/tokens'],
  ['POST', '/sandbox/phones'],
) as fc.Arbitrary<[string, string]>;

const word = fc.oneof(
  fc.constantFrom(
    'device',
    'receiver',
    'type',
    'message',
    'params',
    'text',
    'image',
    'url',
    'document',
    'fileName',
    'mimetype',
    'location',
    'lat',
    'long',
    'degreesLatitude',
    'simulate_typing',
    'viewOnce',
    'phones',
    'participants',
    'name',
    'package',
    'phone',
    'webhook_url',
    'send_interval_ms',
    'registered',
    'subject',
    'file_url',
    'sections',
    'rows',
    'templateButtons',
    'buttons',
    'index',
    '__proto__',
    'constructor',
    'prototype',
    'toString',
    'hasOwnProperty',
    '',
  ),
  fc.string({ maxLength: 8 }),
);
const bracket = fc.oneof(
  word.map((w) => `[${w}]`),
  fc.constantFrom('[]', '[0]', '[1]', '[1023]', '[1024]', '[99999999]', '[-1]', '[', ']', '[[', '%5B__proto__%5D'),
  fc.nat({ max: 2000 }).map((n) => `[${n}]`),
);
const name = fc.oneof(
  fc.tuple(word, fc.array(bracket, { maxLength: 5 })).map(([root, rest]) => root + rest.join('')),
  // Nesting around the limit (31 brackets is the most a body may have).
  fc.integer({ min: 28, max: 36 }).map((depth) => `params${'[a]'.repeat(depth)}`),
);
const value = fc.oneof(
  fc.constantFrom(
    DEVICE,
    '6289876543210',
    'chat',
    'image',
    'file',
    'location',
    'list',
    'template',
    'BETA',
    '0',
    '1',
    'true',
    '-6.2',
    '1e999',
    '',
    'http://127.0.0.1:9/a.png',
    'https://media.example/a.pdf',
  ),
  fc.string({ maxLength: 24 }),
  fc.string({ maxLength: 6 }).map((s) => `%${s}`),
);
const pairs = fc.array(fc.tuple(name, value), { maxLength: 24 });

const urlencodedBody = fc.oneof(
  pairs.map((list) => list.map(([n, v]) => `${encodeURIComponent(n)}=${encodeURIComponent(v)}`).join('&')),
  // Names as clients write them unencoded, and stray separators.
  pairs.map((list) => list.map(([n, v]) => `${n}=${v}`).join('&')),
  fc.string({ maxLength: 80 }),
  fc.uint8Array({ maxLength: 80 }).map((bytes) => Buffer.from(bytes).toString('latin1')),
);

const BOUNDARY = 'fuzzBoundary';
const part = fc.oneof(
  fc.tuple(name, value).map(([n, v]) => `Content-Disposition: form-data; name="${n}"\r\n\r\n${v}`),
  fc
    .tuple(name, fc.string({ maxLength: 12 }), fc.string({ maxLength: 40 }))
    .map(
      ([n, file, v]) =>
        `Content-Disposition: form-data; name="${n}"; filename="${file}"\r\nContent-Type: image/png\r\n\r\n${v}`,
    ),
  fc.string({ maxLength: 40 }),
);
const multipartBody = fc
  .tuple(fc.array(part, { maxLength: 10 }), fc.constantFrom('end', 'cut', 'none'))
  .map(([parts, end]) => {
    const body = parts.map((p) => `--${BOUNDARY}\r\n${p}\r\n`).join('');
    if (end === 'end') return `${body}--${BOUNDARY}--\r\n`;
    return end === 'cut' ? body.slice(0, Math.max(0, body.length - 7)) : body;
  });
const multipartType = fc.constantFrom(
  `multipart/form-data; boundary=${BOUNDARY}`,
  `multipart/form-data; boundary="${BOUNDARY}"`,
  'multipart/form-data',
  'multipart/form-data; boundary=',
  `multipart/form-data; boundary=other`,
);

const body = fc.oneof(
  urlencodedBody.map((payload) => ({ payload, type: 'application/x-www-form-urlencoded' })),
  urlencodedBody.map((payload) => ({ payload, type: 'application/x-www-form-urlencoded; charset=UTF-8' })),
  fc.tuple(multipartBody, multipartType).map(([payload, type]) => ({ payload, type })),
);

describe.skipIf(noStoreAvailable)('form bodies under random input', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway({ config: { sendIntervalMs: 0 }, build: { outboundLookup: nowhere } });
    await gw.app.services.accounts.setMaxDevices('default', 100_000);
    await createPairedDevice(gw, DEVICE);
  });
  afterAll(() => gw?.close());

  it('always answer a well-formed envelope below 500, and never touch a prototype', async () => {
    await fc.assert(
      fc.asyncProperty(routes, body, async ([method, url], { payload, type }) => {
        const res = await gw.app.inject({
          method: method as 'POST',
          url,
          headers: { authorization: `Bearer ${TEST_TOKEN}`, 'content-type': type },
          payload,
        });
        expect(res.statusCode, `${method} ${url} ${type} ${JSON.stringify(payload)}: ${res.body}`).toBeLessThan(500);
        const parsed = JSON.parse(res.body) as Record<string, unknown>;
        const code = 'code' in parsed ? parsed.code : parsed.status;
        expect(code).toBe(res.statusCode);
        expect(typeof parsed.message).toBe('string');
        if (res.statusCode >= 400) {
          expect(
            Object.keys(parsed).every((key) => ['code', 'status', 'message', 'error', 'errors'].includes(key)),
          ).toBe(true);
        }
        for (const probe of [{}, [], Object.create(Object.prototype)]) {
          expect(Object.keys(Object.getPrototypeOf(probe) as object)).toEqual([]);
        }
      }),
      { numRuns: 600 },
    );
    expect((await gw.request('GET', '/readyz', undefined, null)).status).toBe(200);
  });
});
