// docs/internals.md, Whatspie compatibility: every route that takes a body takes it as application/x-www-form-urlencoded and as
// multipart/form-data (text fields) too, nested as in PHP, with the effect the same JSON body has;
// malformed or oversized form bodies get a 4xx envelope naming the problem, never a 500, and a
// multipart file part is refused.
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FORM_FIELD_LIMIT, FORM_PART_LIMIT } from '../../src/http/forms.js';
import { MAX_JSON_DEPTH } from '../../src/http/json-depth.js';
import { TEST_TOKEN, noStoreAvailable, startGateway, type TestGateway } from '../helpers/gateway.js';
import { createPairedDevice } from '../helpers/pairing.js';
import { adminGroup, numbers } from '../groups/helpers.js';
import { waitFor } from '../helpers/wait.js';

const URLENCODED = 'application/x-www-form-urlencoded';
const BOUNDARY = '----gatewayFormBoundary7MA4YWxkTrZu0gW';
const MULTIPART = `multipart/form-data; boundary=${BOUNDARY}`;
const MiB = 1024 * 1024;

/** A urlencoded body of `[name, value]` pairs, written as PHP's http_build_query writes it. */
const urlencoded = (fields: Array<[string, string]>) =>
  fields
    .map(([name, value]) => `${encodeURIComponent(name)}=${encodeURIComponent(value).replace(/%20/g, '+')}`)
    .join('&');

/** A multipart body of text fields (and, when given, parts with their own headers), as curl writes it. */
function multipart(fields: Array<[string, string]>, rawParts: string[] = []): string {
  const parts = fields.map(
    ([name, value]) => `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`,
  );
  return [...parts, ...rawParts].join('') + `--${BOUNDARY}--\r\n`;
}

describe.skipIf(noStoreAvailable)('form bodies', () => {
  let gw: TestGateway;
  let device: string;
  let deviceId: number;
  const fresh = numbers('62857');

  beforeAll(async () => {
    gw = await startGateway({
      config: { sendIntervalMs: 0 },
      build: { sandbox: { deliveryDelayMs: 1, readDelayMs: 1 } },
    });
    const paired = await createPairedDevice(gw, '6285700000071');
    device = paired.phone;
    deviceId = paired.id;
  });
  afterAll(() => gw?.close());

  const send = async (method: 'POST' | 'PUT' | 'PATCH', url: string, payload: string | Readable, type: string) => {
    const res = await gw.app.inject({
      method,
      url,
      headers: { authorization: `Bearer ${TEST_TOKEN}`, 'content-type': type, accept: 'application/json' },
      payload,
    });
    return { status: res.statusCode, body: JSON.parse(res.body) as any };
  };
  const form = (method: 'POST' | 'PUT' | 'PATCH', url: string, fields: Array<[string, string]>) =>
    send(method, url, urlencoded(fields), URLENCODED);
  const multi = (method: 'POST' | 'PUT' | 'PATCH', url: string, fields: Array<[string, string]>) =>
    send(method, url, multipart(fields), MULTIPART);

  it.each([
    ['urlencoded', form],
    ['multipart', multi],
  ] as const)('creates a device from a %s body, its phone kept as text', async (_label, post) => {
    const [phone] = fresh(1);
    const res = await post('POST', '/devices', [
      ['package', 'BETA'],
      ['name', 'Front desk'],
      ['phone', phone!],
    ]);
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.data).toMatchObject({ name: 'Front desk', phone });
  });

  it('updates a device from a form: an integer from its text, and an empty field as null', async () => {
    const created = await gw.request('POST', '/devices', { package: 'BETA', name: 'to update' });
    const id = created.body.data.id as number;
    const set = await form('PATCH', `/devices/${id}`, [
      ['name', 'Renamed'],
      ['send_interval_ms', '250'],
      ['webhook_url', 'https://hooks.example.com/in'],
    ]);
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    expect(set.body.data).toMatchObject({
      name: 'Renamed',
      send_interval_ms: 250,
      webhook_url: 'https://hooks.example.com/in',
    });
    const cleared = await form('PATCH', `/devices/${id}`, [
      ['webhook_url', ''],
      ['send_interval_ms', ''],
    ]);
    expect(cleared.status, JSON.stringify(cleared.body)).toBe(200);
    expect(cleared.body.data).toMatchObject({ webhook_url: null, send_interval_ms: null });
    // A number that is not written as one stays text, and is refused as for JSON.
    const wrong = await form('PATCH', `/devices/${id}`, [['send_interval_ms', '0x10']]);
    expect(wrong.status).toBe(400);
    expect(wrong.body).toMatchObject({
      code: 400,
      status: 400,
      message: 'Validation failed',
      errors: { send_interval_ms: ['must be an integer'] },
    });
    // Fields this route refuses by name are refused in a form too.
    const refused = await form('PATCH', `/devices/${id}`, [['package', 'BUSINESS']]);
    expect(refused.body).toMatchObject({
      code: 400,
      status: 400,
      errors: { package: ['cannot be set by this request'] },
    });
  });

  it('asks for a pairing code and creates a token from forms', async () => {
    const [phone] = fresh(1);
    const created = await gw.request('POST', '/devices', { package: 'BETA', name: 'by code', phone });
    const code = await form('POST', `/devices/${created.body.data.id}/pairing-code`, [['phone', phone!]]);
    expect(code.status, JSON.stringify(code.body)).toBe(200);
    expect(code.body.data).toMatchObject({ phone, pairing_code: expect.stringMatching(/^[A-Z0-9]{4}-[A-Z0-9]{4}$/) });
    const token = await multi('POST', '/tokens', [['name', 'from a form']]);
    expect(token.status, JSON.stringify(token.body)).toBe(201);
    expect(token.body.data).toMatchObject({ name: 'from a form' });
  });

  it('checks contacts from a form: phones[] or a lone phones, booleans from text for the sandbox', async () => {
    const [off, on] = fresh(2);
    // A sandbox phone switched off the network by `registered=0` (PHP writes false as 0).
    expect(
      (
        await form('POST', '/sandbox/phones', [
          ['phone', off!],
          ['registered', '0'],
        ])
      ).status,
    ).toBe(200);
    const both = await form('POST', '/contacts/check', [
      ['device', device],
      ['phones[]', off!],
      ['phones[]', on!],
    ]);
    expect(both.status, JSON.stringify(both.body)).toBe(200);
    expect(both.body.data).toEqual([
      { phone: off, registered: false, is_on_whatsapp: false },
      { phone: on, registered: true, is_on_whatsapp: true },
    ]);
    const one = await multi('POST', '/contacts/check', [
      ['device', device],
      ['phones', on!],
    ]);
    expect(one.status, JSON.stringify(one.body)).toBe(200);
    expect(one.body.data).toEqual([{ phone: on, registered: true, is_on_whatsapp: true }]);
  });

  it('creates, renames, adds members to and sends to a group from forms', async () => {
    const [first, second, third] = fresh(3);
    const created = await form('POST', '/groups', [
      ['device', device],
      ['name', 'Form group'],
      ['participants[]', first!],
      ['participants[]', second!],
    ]);
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const group = await adminGroup(gw, device, 'Form-made', [first!]);
    const renamed = await multi('PUT', `/groups/${group.id}`, [
      ['subject', 'Renamed by form'],
      ['description', ''],
    ]);
    expect(renamed.status, JSON.stringify(renamed.body)).toBe(200);
    expect((await gw.request('GET', `/groups/${group.id}`)).body.data).toMatchObject({
      subject: 'Renamed by form',
      description: '',
    });
    const added = await form('POST', `/api/groups/${group.id}/members/add`, [['participants[0]', third!]]);
    expect(added.status, JSON.stringify(added.body)).toBe(200);
    const sent = await form('POST', `/groups/${group.id}/send`, [
      ['type', 'chat'],
      ['params[text]', 'Hello group, by form'],
    ]);
    expect(sent.status, JSON.stringify(sent.body)).toBe(200);
    await waitFor(
      async () => (await gw.request('GET', `/sandbox/phones/${first}`)).body.data?.inbox ?? [],
      (inbox: any[]) =>
        inbox.some((e) => e.message_id === sent.body.data.id && e.content.text === 'Hello group, by form'),
      { what: 'the group message in a member’s inbox' },
    );
  });

  it('takes a form on every route that takes a body, and the document says so', async () => {
    const doc = (await gw.request('GET', '/openapi.json', undefined, null)).body;
    let routes = 0;
    for (const [path, item] of Object.entries<any>(doc.paths)) {
      for (const [method, operation] of Object.entries<any>(item)) {
        if (operation.requestBody === undefined) continue;
        routes++;
        expect(Object.keys(operation.requestBody.content), `${method} ${path}`).toEqual([
          'application/json',
          URLENCODED,
          'multipart/form-data',
        ]);
        // Ids nothing has: the body is parsed before any handler looks (a 415 would come first), and
        // no route acts on this test's device (logout, restart, disconnect).
        const url = path.replace(/\{[^}]+\}/g, '999999');
        for (const [payload, type] of [
          ['unknown_field=1', URLENCODED],
          [multipart([['unknown_field', '1']]), MULTIPART],
        ]) {
          const res = await send(method.toUpperCase() as 'POST', url, payload!, type!);
          expect(res.status, `${method} ${path} ${type}: ${JSON.stringify(res.body)}`).not.toBe(415);
          expect(res.status, `${method} ${path}`).toBeLessThan(500);
        }
      }
    }
    expect(routes).toBeGreaterThanOrEqual(10);
  });

  describe('limits and malformed bodies', () => {
    const chat = (extra: Array<[string, string]> = []): Array<[string, string]> => [
      ['device', device],
      ['receiver', '6289876543210'],
      ['message', 'limits'],
      ...extra,
    ];

    it(`nests to ${MAX_JSON_DEPTH} levels like JSON and refuses one more`, async () => {
      // `x` and n brackets make n + 1 levels with the body.
      const deep = (levels: number): Array<[string, string]> => [[`x${'[a]'.repeat(levels - 1)}`, 'v']];
      expect((await form('POST', '/messages', chat(deep(MAX_JSON_DEPTH)))).status).toBe(200);
      for (const post of [form, multi]) {
        const res = await post('POST', '/messages', chat(deep(MAX_JSON_DEPTH + 1)));
        expect(res.body).toEqual({
          code: 400,
          status: 400,
          message: 'Validation failed',
          errors: { body: [`must not nest objects and arrays more than ${MAX_JSON_DEPTH} levels deep`] },
        });
      }
    });

    it.each(['__proto__[admin]', 'params[__proto__][text]', 'constructor[prototype][admin]', 'prototype'])(
      'refuses the field name %s in both encodings, polluting nothing',
      async (name) => {
        for (const post of [form, multi]) {
          const res = await post('POST', '/messages', chat([[name, 'x']]));
          expect(res.body).toEqual({
            code: 400,
            status: 400,
            message: 'Validation failed',
            errors: { body: ['field names must not use __proto__, constructor or prototype'] },
          });
        }
        expect(({} as Record<string, unknown>).admin).toBeUndefined();
      },
    );

    it(`takes ${FORM_FIELD_LIMIT} urlencoded fields and ${FORM_PART_LIMIT} multipart parts, and refuses one more`, async () => {
      const padding = (count: number) => Array.from({ length: count }, (_, i): [string, string] => [`f${i}`, '']);
      const base = chat().length;
      expect((await form('POST', '/messages', chat(padding(FORM_FIELD_LIMIT - base)))).status).toBe(200);
      expect(await form('POST', '/messages', chat(padding(FORM_FIELD_LIMIT - base + 1)))).toEqual({
        status: 400,
        body: {
          code: 400,
          status: 400,
          message: 'Validation failed',
          errors: { body: [`must have at most ${FORM_FIELD_LIMIT} fields`] },
        },
      });
      expect((await multi('POST', '/messages', chat(padding(FORM_PART_LIMIT - base)))).status).toBe(200);
      expect(await multi('POST', '/messages', chat(padding(FORM_PART_LIMIT - base + 1)))).toEqual({
        status: 400,
        body: {
          code: 400,
          status: 400,
          message: 'Validation failed',
          errors: { body: [`must have at most ${FORM_PART_LIMIT} parts`] },
        },
      });
    });

    it('refuses an index bomb at once', async () => {
      const res = await form('POST', '/contacts/check', [
        ['device', device],
        ['phones[99999999]', '6289876543210'],
      ]);
      expect(res.status).toBe(400);
      expect(res.body.errors.body[0]).toMatch(/^must not have a list of more than 1024 items/);
    });

    it('answers a field given twice where one value is expected as a refusal of that field', async () => {
      const res = await form('POST', '/devices', [
        ['package', 'BETA'],
        ['name', 'one'],
        ['name', 'two'],
      ]);
      expect(res.body).toEqual({
        code: 400,
        status: 400,
        message: 'Validation failed',
        errors: { name: ['must be a string'] },
      });
    });

    it('takes exactly the JSON body limit and answers 413 one byte over, in both encodings', async () => {
      const sized = (bytes: number) => {
        const head = urlencoded(chat()) + '&pad=';
        return head + 'a'.repeat(bytes - head.length);
      };
      expect((await send('POST', '/messages', sized(MiB), URLENCODED)).status).toBe(200);
      const over = await send('POST', '/messages', sized(MiB + 1), URLENCODED);
      expect(over).toEqual({ status: 413, body: { code: 413, status: 413, message: 'Payload too large' } });

      const close = `--${BOUNDARY}--\r\n`;
      const body = (bytes: number) => {
        const open = multipart(chat()).slice(0, -close.length);
        const part = `--${BOUNDARY}\r\nContent-Disposition: form-data; name="pad"\r\n\r\n`;
        const tail = `\r\n${close}`;
        return open + part + 'a'.repeat(bytes - open.length - part.length - tail.length) + tail;
      };
      expect(Buffer.byteLength(body(MiB))).toBe(MiB);
      expect((await send('POST', '/messages', body(MiB), MULTIPART)).status).toBe(200);
      expect(await send('POST', '/messages', body(MiB + 1), MULTIPART)).toEqual(over);
      // Sent in chunks with no length announced: counted as it arrives.
      const chunked = Readable.from(
        [body(MiB + 1)].map((text) => Buffer.from(text)),
        { objectMode: false },
      );
      expect(await send('POST', '/messages', chunked, MULTIPART)).toEqual(over);
    });

    it('refuses a file part by its field name, without taking the message', async () => {
      const file = `--${BOUNDARY}\r\nContent-Disposition: form-data; name="photo"; filename="a.png"\r\nContent-Type: image/png\r\n\r\n${'\u0089PNG'.repeat(1000)}\r\n`;
      const before = (await gw.request('GET', `/devices/${deviceId}`)).body.data.quote_used;
      const res = await send('POST', '/messages', multipart(chat(), [file]), MULTIPART);
      expect(res.body).toEqual({
        code: 400,
        status: 400,
        message: 'Validation failed',
        errors: { photo: ['is a file: files are not uploaded, media are given by URL (e.g. params[image][url])'] },
      });
      expect((await gw.request('GET', `/devices/${deviceId}`)).body.data.quote_used).toBe(before);
    });

    it.each([
      [
        'no boundary',
        'multipart/form-data',
        multipart([['a', 'b']]),
        'malformed multipart body (no boundary in its Content-Type)',
      ],
      ['another boundary', 'multipart/form-data; boundary=other', multipart([['a', 'b']]), 'malformed multipart body'],
      [
        'a cut-off body',
        MULTIPART,
        `--${BOUNDARY}\r\nContent-Disposition: form-data; name="a"\r\n\r\nb`,
        'malformed multipart body',
      ],
    ])('refuses a multipart body with %s', async (_label, type, payload, problem) => {
      const res = await send('POST', '/messages', payload, type);
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code: 400, status: 400, message: 'Validation failed' });
      // A body whose parts never start reads as an empty form: its fields are then named as missing.
      if (res.body.errors.body !== undefined) expect(res.body.errors.body).toEqual([problem]);
    });

    it('reads an empty form as an empty body: the fields are named as missing', async () => {
      const res = await send('POST', '/devices', '', URLENCODED);
      expect(res.body).toEqual({
        code: 400,
        status: 400,
        message: 'Validation failed',
        errors: { package: ['is required'], name: ['is required'] },
      });
    });
  });
});
