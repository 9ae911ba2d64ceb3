// Issue 22, item 12: every request body the OpenAPI document shows is accepted
// as shown. The test walks `/openapi.json` and sends, to a real sandbox gateway
// with paired devices, every explicit example of every request body, and where
// a body has none, the example Swagger UI builds from its schema (what `/docs`
// fills in under "Try it out"). None may be refused with 400. Every POST takes
// a declared body (an operation that needs none declares an empty object).
//
// Media URLs in examples name https://example.com/...; the machine has no
// network, so the test serves the same paths itself and sends the example with
// only the origin changed.
import { createServer, type Server } from 'node:http';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { noStoreAvailable, startGateway, TEST_TOKEN, type TestGateway } from '../helpers/gateway.js';
import { createPairedDevice } from '../helpers/pairing.js';

/** The number the document's examples use for a device and a receiver. */
const EXAMPLE_PHONE = '6281234567890';
const SPARE_PHONE = '6281200000002';

type Schema = Record<string, any>;

const FORMAT_SAMPLES: Record<string, string> = {
  email: 'user@example.com',
  'date-time': '2019-08-24T14:15:22Z',
  date: '2019-08-24',
  uuid: '3fa85f64-5717-4562-b3fc-2c963f66afa6',
  uri: 'https://example.com/',
  url: 'https://example.com/',
  hostname: 'example.com',
  ipv4: '198.51.100.42',
  ipv6: '2001:db8::1',
};

/**
 * The example Swagger UI builds from a schema when the body shows none: a schema's own example
 * first (`example`, `examples[0]`, `default`, `const`, `enum[0]`), the first branch of a `oneOf` or
 * `anyOf`, every property of an object, one item of an array (as many as `minItems`), and
 * otherwise a placeholder by type ("string", 0, true). A string with a `pattern` and no example
 * would get a random match, which no test can expect to be a sensible value: such a schema
 * must carry an example (the test says where).
 */
function sample(schema: Schema, where: string, missing: string[]): unknown {
  if (schema.example !== undefined) return schema.example;
  if (Array.isArray(schema.examples) && schema.examples.length > 0) return schema.examples[0];
  if (schema.default !== undefined) return schema.default;
  if (schema.const !== undefined) return schema.const;
  if (Array.isArray(schema.enum)) return schema.enum[0];
  const branch = schema.oneOf?.[0] ?? schema.anyOf?.[0];
  if (branch !== undefined) return sample(branch, where, missing);
  const types: string[] = Array.isArray(schema.type) ? schema.type : [schema.type];
  const type = types.find((t) => t !== 'null') ?? (schema.properties ? 'object' : undefined);
  switch (type) {
    case 'object': {
      const out: Record<string, unknown> = {};
      for (const [name, property] of Object.entries<Schema>(schema.properties ?? {})) {
        if (property.readOnly === true) continue;
        out[name] = sample(property, `${where}.${name}`, missing);
      }
      return out;
    }
    case 'array': {
      const item = sample(schema.items ?? {}, `${where}[]`, missing);
      return Array.from({ length: Math.max(1, schema.minItems ?? 1) }, () => item);
    }
    case 'string': {
      if (schema.format !== undefined && FORMAT_SAMPLES[schema.format] !== undefined) {
        return FORMAT_SAMPLES[schema.format];
      }
      const placeholder = 'string'.padEnd(schema.minLength ?? 0, 'g').slice(0, schema.maxLength ?? Infinity);
      // Swagger UI would make up a random match of the pattern: a value only an explicit example makes sensible.
      if (schema.pattern !== undefined && !new RegExp(schema.pattern, 'u').test(placeholder)) missing.push(where);
      return placeholder;
    }
    case 'integer':
    case 'number':
      return schema.minimum ?? (schema.exclusiveMinimum === undefined ? 0 : schema.exclusiveMinimum + 1);
    case 'boolean':
      return true;
    default:
      return {};
  }
}

interface Example {
  readonly method: string;
  readonly path: string;
  readonly name: string;
  readonly body: unknown;
}

/** Every request body example of the document: explicit ones, else Swagger UI's, one per `oneOf` branch. */
function examplesOf(doc: Schema): { examples: Example[]; missing: string[]; bodiless: string[] } {
  const examples: Example[] = [];
  const missing: string[] = [];
  const bodiless: string[] = [];
  for (const [path, operations] of Object.entries<Schema>(doc.paths)) {
    for (const [method, operation] of Object.entries<Schema>(operations)) {
      if (!['post', 'put', 'patch'].includes(method)) continue;
      const media = operation.requestBody?.content?.['application/json'];
      if (media === undefined) {
        bodiless.push(`${method.toUpperCase()} ${path}`);
        continue;
      }
      const at = `${method.toUpperCase()} ${path}`;
      if (media.example !== undefined) examples.push({ method, path, name: 'example', body: media.example });
      for (const [name, entry] of Object.entries<Schema>(media.examples ?? {})) {
        examples.push({ method, path, name, body: entry.value });
      }
      if (media.example !== undefined || media.examples !== undefined) continue;
      const branches: Schema[] = media.schema.oneOf ?? [media.schema];
      branches.forEach((branch, i) => {
        examples.push({ method, path, name: `Swagger UI's (${i})`, body: sample(branch, at, missing) });
      });
    }
  }
  return { examples, missing, bodiless };
}

const FIXTURES = new URL('../fixtures/media/', import.meta.url);
const TYPES: Record<string, string> = {
  jpg: 'image/jpeg',
  png: 'image/png',
  gif: 'image/gif',
  webp: 'image/webp',
  mp4: 'video/mp4',
  ogg: 'audio/ogg',
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
};

/** Serves a fixture of the requested path's extension, whatever the rest of the path says. */
async function mediaServer(): Promise<{ server: Server; origin: string }> {
  const server = createServer((request, response) => {
    const extension = (request.url ?? '').split('?')[0]!.split('.').pop() ?? '';
    const type = TYPES[extension];
    if (type === undefined) {
      response.writeHead(404).end();
      return;
    }
    response.writeHead(200, { 'content-type': type }).end(readFileSync(new URL(`tiny.${extension}`, FIXTURES)));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

/**
 * Values only a running pairing attempt issues (a QR's text, a pairing code): no example can be a
 * live one, so these two answer their own refusal of the value, and nothing else (never a refused shape).
 */
const PLACEHOLDERS: Record<string, string> = {
  'POST /sandbox/scan': 'Invalid QR code',
  'POST /sandbox/pair': 'Invalid pairing code',
};

describe.skipIf(noStoreAvailable)('the request examples of the OpenAPI document', () => {
  let gw: TestGateway;
  let media: { server: Server; origin: string };
  let doc: Schema;
  let deviceId: number;
  let spareId: number;
  beforeAll(async () => {
    media = await mediaServer();
    gw = await startGateway({ config: { allowPrivateUrls: true, sendIntervalMs: 0 } });
    deviceId = (await createPairedDevice(gw, EXAMPLE_PHONE)).id;
    spareId = (await createPairedDevice(gw, SPARE_PHONE)).id;
    doc = (await gw.request('GET', '/openapi.json', undefined, null)).body;
  });
  afterAll(async () => {
    await gw?.close();
    await new Promise((resolve) => media?.server.close(resolve));
  });

  /** Operations that end or drop a device's connection act on the spare device, and go last. */
  const disruptive = (path: string) => /\/(logout|restart|disconnect)$/.test(path);

  /** The group the example of `POST /groups` creates: the group routes' examples act on it. */
  let groupId = '1';

  function urlOf(example: Example): string {
    const device = disruptive(example.path) ? spareId : deviceId;
    const onDevice = example.path.startsWith('/devices') || example.path.startsWith('/sandbox/devices');
    return example.path
      .replace('{id}', onDevice ? String(device) : groupId)
      .replace('{group_id}', groupId)
      .replace('{delivery_id}', '1')
      .replace('{phone}', EXAMPLE_PHONE)
      .replace('{chat}', EXAMPLE_PHONE);
  }

  it('declares a request body on every operation that takes one', () => {
    expect(examplesOf(doc).bodiless).toEqual([]);
  });

  it.each([
    ['/devices/999/logout'],
    ['/devices/999/restart'],
    ['/devices/999/webhook-deliveries/1/retry'],
    ['/devices/999/webhook-secret'],
  ])('%s declares an optional body of no fields, and still takes every form of it', async (url) => {
    const operation = doc.paths[url.replace('999', '{id}').replace('/1/', '/{delivery_id}/')].post;
    expect(operation.requestBody.required).toBe(false);
    expect(operation.requestBody.content['application/json'].schema).toMatchObject({ type: 'object', properties: {} });
    const json = { 'content-type': 'application/json' };
    const form = { 'content-type': 'application/x-www-form-urlencoded' };
    for (const [headers, payload] of [
      [{}, undefined],
      [json, ''],
      [json, '{}'],
      [json, '{"reason":"ignored"}'],
      [form, ''],
      [form, 'reason=ignored'],
    ] as const) {
      const response = await gw.app.inject({
        method: 'POST',
        url,
        headers: { authorization: `Bearer ${TEST_TOKEN}`, ...headers },
        ...(payload === undefined ? {} : { payload }),
      });
      // Past validation: the device does not exist.
      expect(response.statusCode, `${JSON.stringify(headers)} ${String(payload)}: ${response.body}`).toBe(404);
    }
  });

  it('gives an example to every pattern-checked text a client fills in', () => {
    expect(examplesOf(doc).missing).toEqual([]);
  });

  it('accepts every request example as shown (never 400)', async () => {
    const { examples } = examplesOf(doc);
    expect(examples.length).toBeGreaterThan(20);
    // The group is created first, so the examples of the group routes act on a real one; disruptive ones go last.
    const rank = (e: Example) => (e.path === '/groups' ? 0 : disruptive(e.path) ? 2 : 1);
    const ordered = [...examples].sort((a, b) => rank(a) - rank(b));
    let accepted = 0;
    const refused: string[] = [];
    for (const example of ordered) {
      const payload = JSON.parse(JSON.stringify(example.body).replaceAll('https://example.com', media.origin));
      const response = await gw.app.inject({
        method: example.method.toUpperCase() as 'POST',
        url: urlOf(example),
        headers: { authorization: `Bearer ${TEST_TOKEN}` },
        payload,
      });
      if (example.path === '/groups' && response.statusCode < 300) groupId = String(response.json().data.id);
      if (response.statusCode < 300) accepted += 1;
      const placeholder = PLACEHOLDERS[`${example.method.toUpperCase()} ${example.path}`];
      if (response.statusCode === 400 && placeholder !== undefined && response.json().message === placeholder) continue;
      if (response.statusCode === 400 || response.statusCode >= 500) {
        refused.push(
          `${example.method.toUpperCase()} ${example.path} ${example.name}: ${response.statusCode} ${response.body}`,
        );
      }
    }
    expect(refused).toEqual([]);
    // Most were carried out, not only let through validation (the rest: a delivery or message that does not exist).
    expect(accepted).toBeGreaterThan(examples.length / 2);
  });
});
