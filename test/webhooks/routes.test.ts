// Account webhooks as a resource (DECISIONS 17): every route, every error at its boundary, the limit of 20
// exact under concurrent creates, another account's webhook answering 404, secrets shown only at creation
// and rotation.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { noStoreAvailable, startGateway, type TestGateway } from '../helpers/gateway.js';

const URL_A = 'http://127.0.0.1:9/a';

describe.skipIf(noStoreAvailable)('account webhooks: the resource', () => {
  let gw: TestGateway;
  let deviceId: number;
  let otherToken: string;
  let otherDevice: number;
  beforeAll(async () => {
    gw = await startGateway({ config: { allowPrivateUrls: true } });
    deviceId = (await gw.request('POST', '/devices', { package: 'BUSINESS', name: 'mine' })).body.data.id;
    const other = await gw.app.services.accounts.createAccount('webhooks-other');
    otherToken = (await gw.app.services.accounts.createToken(other.id, 't')).token;
    otherDevice = (await gw.request('POST', '/devices', { package: 'BUSINESS', name: 'theirs' }, otherToken)).body.data
      .id;
  });
  afterAll(async () => {
    await gw?.close();
  });

  async function clear(): Promise<void> {
    for (const hook of (await gw.request('GET', '/webhooks')).body.data) {
      expect((await gw.request('DELETE', `/webhooks/${hook.id}`)).status).toBe(200);
    }
  }

  it('creates with defaults and shows the secret at creation only', async () => {
    const created = await gw.request('POST', '/webhooks', { url: URL_A });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body).toMatchObject({ code: 201, status: 201, message: 'Webhook created' });
    const hook = created.body.data;
    expect(hook).toMatchObject({
      url: URL_A,
      devices: null,
      events: ['*'],
      format: 'standard',
      headers: {},
      enabled: true,
    });
    expect(hook.id).toMatch(/^wh_[0-9A-Z]{26}$/);
    expect(hook.secret).toMatch(/^whsec_/);
    const got = await gw.request('GET', `/webhooks/${hook.id}`);
    expect(got.status).toBe(200);
    expect(got.body.data).not.toHaveProperty('secret');
    expect(got.body.data).toEqual(withoutSecret(hook));
    const listed = await gw.request('GET', '/webhooks');
    expect(listed.body.data.map((h: any) => h.id)).toContain(hook.id);
    expect(listed.body.data.every((h: any) => !('secret' in h))).toBe(true);
    await clear();
  });

  it('creates with every field, updates only the fields given, and sets filters back to all', async () => {
    const created = await gw.request('POST', '/webhooks', {
      url: URL_A,
      devices: [deviceId],
      events: ['message.sent', 'message.incoming'],
      format: 'whatspie_v2',
      headers: { Authorization: 'Bearer abc', 'X-Team': 'crm' },
      enabled: false,
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const id = created.body.data.id;
    expect(created.body.data).toMatchObject({
      devices: [deviceId],
      events: ['message.sent', 'message.incoming'],
      format: 'whatspie_v2',
      headers: { Authorization: 'Bearer abc', 'X-Team': 'crm' },
      enabled: false,
    });
    const patched = await gw.request('PATCH', `/webhooks/${id}`, { enabled: true, url: 'http://127.0.0.1:9/b' });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    expect(patched.body).toMatchObject({ code: 200, message: 'Webhook updated' });
    expect(patched.body.data).toMatchObject({
      url: 'http://127.0.0.1:9/b',
      enabled: true,
      devices: [deviceId],
      format: 'whatspie_v2',
      headers: { Authorization: 'Bearer abc', 'X-Team': 'crm' },
    });
    expect(patched.body.data).not.toHaveProperty('secret');
    const all = await gw.request('PATCH', `/webhooks/${id}`, { devices: null, events: ['*'], headers: {} });
    expect(all.body.data).toMatchObject({ devices: null, events: ['*'], headers: {} });
    const empty = await gw.request('PATCH', `/webhooks/${id}`, {});
    expect(empty.status).toBe(400);
    expect(empty.body.message).toBe('Validation failed');
    await clear();
  });

  it('rotates the secret: the new one is shown once and differs', async () => {
    const hook = (await gw.request('POST', '/webhooks', { url: URL_A })).body.data;
    const rotated = await gw.request('POST', `/webhooks/${hook.id}/secret`);
    expect(rotated.status).toBe(200);
    expect(rotated.body.message).toBe('Webhook secret rotated');
    expect(rotated.body.data.secret).toMatch(/^whsec_/);
    expect(rotated.body.data.secret).not.toBe(hook.secret);
    const row = await gw.app.store.db
      .selectFrom('webhooks')
      .selectAll()
      .where('id', '=', hook.id)
      .executeTakeFirstOrThrow();
    expect(row.secret_previous).toBe(hook.secret);
    await clear();
  });

  it('refuses bad input with 400 Validation failed, field by field', async () => {
    const cases: [unknown, string][] = [
      [{}, 'url'],
      [{ url: 'ftp://example.com/x' }, 'url'],
      [{ url: 'not a url' }, 'url'],
      [{ url: URL_A, events: ['message.nope'] }, 'events.0'],
      [{ url: URL_A, events: [] }, 'events'],
      [{ url: URL_A, events: ['*', 'message.sent'] }, 'events'],
      [{ url: URL_A, format: 'xml' }, 'format'],
      [{ url: URL_A, enabled: 'yes' }, 'enabled'],
      [{ url: URL_A, devices: ['x'] }, 'devices.0'],
      [{ url: URL_A, extra: 1 }, 'extra'],
      [{ url: URL_A, headers: { Host: 'x' } }, 'headers.Host'],
      [{ url: URL_A, headers: { 'content-length': '1' } }, 'headers.content-length'],
      [{ url: URL_A, headers: { 'Transfer-Encoding': 'chunked' } }, 'headers.Transfer-Encoding'],
      [{ url: URL_A, headers: { Connection: 'close' } }, 'headers.Connection'],
      [{ url: URL_A, headers: { 'Webhook-Signature': 'v1,x' } }, 'headers.Webhook-Signature'],
      [{ url: URL_A, headers: { 'webhook-id': 'x' } }, 'headers.webhook-id'],
      [{ url: URL_A, headers: { 'bad name': 'x' } }, 'headers.bad name'],
      [{ url: URL_A, headers: { 'X-A': 'line\r\nbreak' } }, 'headers.X-A'],
      [{ url: URL_A, headers: { 'X-A': 'a', 'x-a': 'b' } }, 'headers.x-a'],
      [{ url: URL_A, headers: Object.fromEntries(Array.from({ length: 11 }, (_, i) => [`X-H${i}`, 'v'])) }, 'headers'],
    ];
    for (const [body, field] of cases) {
      const res = await gw.request('POST', '/webhooks', body);
      expect(res.status, JSON.stringify({ body, answer: res.body })).toBe(400);
      expect(res.body.message).toBe('Validation failed');
      expect(Object.keys(res.body.errors), JSON.stringify(body)).toContain(field);
    }
    // Ten headers is the limit, not past it.
    const ten = Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`X-H${i}`, 'v']));
    const ok = await gw.request('POST', '/webhooks', { url: URL_A, headers: ten });
    expect(ok.status, JSON.stringify(ok.body)).toBe(201);
    expect(Object.keys(ok.body.data.headers)).toHaveLength(10);
    // PATCH checks the same way.
    const bad = await gw.request('PATCH', `/webhooks/${ok.body.data.id}`, { headers: { Host: 'x' } });
    expect(bad.status).toBe(400);
    expect(Object.keys(bad.body.errors)).toEqual(['headers.Host']);
    await clear();
  });

  it('refuses a URL the outbound guard would always refuse, as a device webhook_url', async () => {
    const strict = await startGateway({ config: { allowPrivateUrls: false } });
    try {
      const res = await strict.request('POST', '/webhooks', { url: 'http://127.0.0.1:9/x' });
      expect(res.status).toBe(400);
      expect(res.body.message).toBe('Validation failed');
      expect(Object.keys(res.body.errors)).toEqual(['url']);
      const device = await strict.request(
        'PATCH',
        `/devices/${(await strict.request('POST', '/devices', { package: 'BUSINESS', name: 'd' })).body.data.id}`,
        { webhook_url: 'http://127.0.0.1:9/x' },
      );
      expect(res.body.errors.url).toEqual(device.body.errors.webhook_url);
    } finally {
      await strict.close();
    }
  });

  it('answers 404 Device not found for a device of another account or none in `devices`', async () => {
    for (const devices of [[otherDevice], [deviceId, 999_999]]) {
      const res = await gw.request('POST', '/webhooks', { url: URL_A, devices });
      expect(res.status).toBe(404);
      expect(res.body.message).toBe('Device not found');
    }
    expect((await gw.request('GET', '/webhooks')).body.data).toEqual([]);
  });

  it('answers 404 Webhook not found for another account’s webhook, a missing one and a malformed id', async () => {
    const hook = (await gw.request('POST', '/webhooks', { url: URL_A })).body.data;
    const paths = (id: string) =>
      [
        ['GET', `/webhooks/${id}`, undefined],
        ['PATCH', `/webhooks/${id}`, { enabled: false }],
        ['DELETE', `/webhooks/${id}`, undefined],
        ['POST', `/webhooks/${id}/secret`, undefined],
        ['GET', `/webhooks/${id}/deliveries`, undefined],
        ['POST', `/webhooks/${id}/deliveries/dlv_x/retry`, undefined],
      ] as const;
    for (const [method, path, body] of paths(hook.id)) {
      const res = await gw.request(method, path, body, otherToken);
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.body.message).toBe('Webhook not found');
    }
    expect((await gw.request('GET', '/webhooks', undefined, otherToken)).body.data).toEqual([]);
    for (const id of ['wh_01ZZZZZZZZZZZZZZZZZZZZZZZZ', 'nope']) {
      for (const [method, path, body] of paths(id)) {
        const res = await gw.request(method, path, body);
        expect(res.status, `${method} ${path}`).toBe(404);
        expect(res.body.message).toBe('Webhook not found');
      }
    }
    // Still there, unchanged, for its own account.
    expect((await gw.request('GET', `/webhooks/${hook.id}`)).body.data.enabled).toBe(true);
    const missing = await gw.request('POST', `/webhooks/${hook.id}/deliveries/dlv_missing/retry`);
    expect(missing.status).toBe(404);
    expect(missing.body.message).toBe('Delivery not found');
    await clear();
  });

  it('answers 401 without a token', async () => {
    const res = await gw.request('GET', '/webhooks', undefined, null);
    expect(res.status).toBe(401);
  });

  it('allows exactly 20 webhooks per account, under 30 concurrent creates', async () => {
    const results = await Promise.all(
      Array.from({ length: 30 }, (_, i) => gw.request('POST', '/webhooks', { url: `${URL_A}?n=${i}` })),
    );
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(20);
    const refused = results.filter((r) => r.status === 403);
    expect(refused).toHaveLength(10);
    for (const r of refused) expect(r.body.message).toBe('Webhook limit exceeded');
    expect((await gw.request('GET', '/webhooks')).body.data).toHaveLength(20);
    // Another account has its own 20.
    expect((await gw.request('POST', '/webhooks', { url: URL_A }, otherToken)).status).toBe(201);
    // A deletion makes room for one.
    const first = (await gw.request('GET', '/webhooks')).body.data[0];
    expect((await gw.request('DELETE', `/webhooks/${first.id}`)).body).toMatchObject({ message: 'Webhook deleted' });
    expect((await gw.request('POST', '/webhooks', { url: URL_A })).status).toBe(201);
    expect((await gw.request('POST', '/webhooks', { url: URL_A })).status).toBe(403);
    await clear();
  });

  it('documents the routes in the OpenAPI document', async () => {
    const doc = (await gw.request('GET', '/openapi.json', undefined, null)).body;
    expect(Object.keys(doc.paths['/webhooks']).sort()).toEqual(['get', 'post']);
    expect(Object.keys(doc.paths['/webhooks/{id}']).sort()).toEqual(['delete', 'get', 'patch']);
    expect(doc.paths['/webhooks/{id}/secret'].post).toBeDefined();
    expect(doc.paths['/webhooks/{id}/deliveries'].get).toBeDefined();
    expect(doc.paths['/webhooks/{id}/deliveries/{delivery_id}/retry'].post).toBeDefined();
  });
});

function withoutSecret(hook: Record<string, unknown>): Record<string, unknown> {
  const { secret: _secret, ...rest } = hook;
  return rest;
}
