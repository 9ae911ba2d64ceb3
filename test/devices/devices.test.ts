// Spec 4.1-4.3, 2.1, 2.2, 7.2; docs/internals.md, Devices and pairing; Quota: the device API.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { noStoreAvailable, startGateway, type TestGateway } from '../helpers/gateway.js';

describe.skipIf(noStoreAvailable)('devices', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway();
    await gw.app.services.accounts.setMaxDevices('default', 1000);
  });
  afterAll(() => gw?.close());

  const create = (body: unknown) => gw.request('POST', '/devices', body);

  it('creates a device with every field of the device object', async () => {
    const res = await create({ package: 'STARTER60K', name: 'Front desk' });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      code: 201,
      status: 201,
      message: 'Device created',
      data: {
        id: expect.any(Number),
        name: 'Front desk',
        phone: null,
        webhook_url: null,
        webhook_secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{32}$/),
        webhook_format: 'standard',
        webhook_reply: false,
        status: 'ACTIVE',
        version: 'multidevice',
        paired_status: 'UNPAIRED',
        connected: false,
        // Where its pairing goes: the gateway's network here (docs/networks-per-device.md).
        network: 'sandbox',
        send_interval_ms: null,
        reject_calls: false,
        reject_calls_message: null,
        created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        updated_at: expect.stringMatching(/Z$/),
        server: { name: 'test-node', status: 'ACTIVE' },
        package: { code: 'STARTER60K', name: 'Starter' },
        subscription: { quote_available: '10000', quote_used: '0' },
      },
    });
    expect(JSON.stringify(res.body)).not.toContain('network_session');
  });

  it.each([
    ['BETA', 'Beta Tester', '250'],
    ['STARTER60K', 'Starter', '10000'],
    ['STARTUP240K', 'Startup', '-1'],
    ['BUSINESS', 'Business', '500000'],
  ])('package %s is "%s" with quote_available %s', async (code, name, available) => {
    const res = await create({ package: code, name: 'plan' });
    expect(res.body.data.package).toEqual({ code, name });
    expect(res.body.data.subscription).toEqual({ quote_available: available, quote_used: '0' });
  });

  it.each([['GOLD'], ['beta'], [''], [1], [null], [['BETA']]])(
    'answers 400 Invalid package type for package %j',
    async (value) => {
      const res = await create({ package: value, name: 'x' });
      expect(res.status).toBe(400);
      expect(res.body.code).toBe(400);
      expect(res.body.message).toBe('Invalid package type');
    },
  );

  it('answers 400 Validation failed for missing fields', async () => {
    const res = await create({});
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      code: 400,
      status: 400,
      message: 'Validation failed',
      errors: { package: ['is required'], name: ['is required'] },
    });
    const noName = await create({ package: 'BETA' });
    expect(noName.body).toEqual({
      code: 400,
      status: 400,
      message: 'Validation failed',
      errors: { name: ['is required'] },
    });
    const emptyName = await create({ package: 'BETA', name: '' });
    expect(emptyName.body.message).toBe('Validation failed');
    expect(Object.keys(emptyName.body.errors)).toEqual(['name']);
  });

  it('takes an optional phone and refuses a malformed one with 400 Invalid phone number format', async () => {
    const ok = await create({ package: 'BETA', name: 'p', phone: '6281234567890' });
    expect(ok.status).toBe(201);
    // docs/internals.md, Devices and pairing: the number given at creation is the device's `phone` from creation on.
    expect(ok.body.data.phone).toBe('6281234567890');
    expect(ok.body.data.paired_status).toBe('UNPAIRED');
    const got = await gw.request('GET', `/devices/${ok.body.data.id}`);
    expect(got.body.data.phone).toBe('6281234567890');
    const listed = await gw.request('GET', '/devices?per_page=100');
    expect(listed.body.data.find((d: { id: number }) => d.id === ok.body.data.id).phone).toBe('6281234567890');
    // Known by that number before it pairs: a send from it is refused as not connected, not as unknown.
    const send = await gw.request('POST', '/messages', {
      device: '6281234567890',
      receiver: '6289876543210',
      type: 'chat',
      params: { text: 'too early' },
    });
    expect(send.status).toBe(400);
    expect(send.body).toEqual({ code: 400, status: 400, message: 'Device not connected' });
    const noPhone = await create({ package: 'BETA', name: 'no phone' });
    expect(noPhone.body.data.phone).toBeNull(); // set when paired
    for (const phone of [
      '+6281234567890',
      '06281234567890',
      '0062812345678',
      '62-812-3456',
      '62 812 3456 789',
      '123',
      '1234567890123456',
      'abc',
    ]) {
      const res = await create({ package: 'BETA', name: 'p', phone });
      expect(res.status, phone).toBe(400);
      expect(res.body.message, phone).toBe('Invalid phone number format');
    }
  });

  it('gets a device, and answers 404 Device not found for unknown ids', async () => {
    const created = await create({ package: 'BUSINESS', name: 'get me' });
    const res = await gw.request('GET', `/devices/${created.body.data.id}`);
    expect(res.status).toBe(200);
    expect(res.body.status).toBe(200);
    expect(typeof res.body.message).toBe('string');
    expect(res.body.data).toEqual(created.body.data);
    for (const id of ['999999', 'abc', '0', '-1', '1.5', '99999999999999999999']) {
      const missing = await gw.request('GET', `/devices/${id}`);
      expect(missing.status, id).toBe(404);
      expect(missing.body, id).toMatchObject({ code: 404, status: 404, message: 'Device not found' });
    }
  });

  it('names a device only by its id in decimal digits: other spellings of the number are 404', async () => {
    const { id } = (await create({ package: 'BETA', name: 'spelled' })).body.data as { id: number };
    const spellings = [`0x${id.toString(16)}`, `${id}%20`, `%20${id}`, `0${id}`, `${id}.0`, `${id}e0`, `+${id}`];
    for (const spelling of spellings) {
      for (const method of ['GET', 'PATCH', 'DELETE'] as const) {
        const res = await gw.request(method, `/devices/${spelling}`, method === 'PATCH' ? { name: 'x' } : undefined);
        expect(res.status, `${method} ${spelling}`).toBe(404);
        expect(res.body, `${method} ${spelling}`).toMatchObject({
          code: 404,
          status: 404,
          message: 'Device not found',
        });
      }
    }
    expect((await gw.request('GET', `/devices/${id}`)).body.data.name).toBe('spelled');
    // The same rule for every numeric path id: tokens, groups, webhook deliveries.
    expect((await gw.request('DELETE', '/tokens/0x1')).body).toMatchObject({
      code: 404,
      status: 404,
      message: 'Token not found',
    });
    expect((await gw.request('GET', '/groups/0x1')).body).toMatchObject({
      code: 404,
      status: 404,
      message: 'Group not found',
    });
    expect((await gw.request('GET', `/devices/${id}/webhook-deliveries?page=0x1`)).status).toBe(400);
  });

  it('lists devices with pagination', async () => {
    const fresh = await startGateway();
    try {
      for (let i = 1; i <= 5; i++) await fresh.request('POST', '/devices', { package: 'BETA', name: `d${i}` });
      const all = await fresh.request('GET', '/devices');
      expect(all.status).toBe(200);
      expect(all.body.status).toBe(200);
      expect(all.body.meta).toEqual({ page: 1, per_page: 20, total: 5 });
      expect(all.body.data.map((d: { name: string }) => d.name)).toEqual(['d1', 'd2', 'd3', 'd4', 'd5']);

      const page2 = await fresh.request('GET', '/devices?page=2&per_page=2');
      expect(page2.body.meta).toEqual({ page: 2, per_page: 2, total: 5 });
      expect(page2.body.data.map((d: { name: string }) => d.name)).toEqual(['d3', 'd4']);
      const beyond = await fresh.request('GET', '/devices?page=9&per_page=2');
      expect(beyond.body.data).toEqual([]);

      expect((await fresh.request('GET', '/devices?per_page=100')).status).toBe(200);
      for (const query of ['per_page=101', 'per_page=0', 'page=0', 'page=x', 'page=-1']) {
        const bad = await fresh.request('GET', `/devices?${query}`);
        expect(bad.status, query).toBe(400);
        expect(bad.body.message).toBe('Validation failed');
      }
    } finally {
      await fresh.close();
    }
  });

  it('changes name and webhook_url, and refuses a webhook_url that is not an absolute http(s) URL', async () => {
    const created = await create({ package: 'BETA', name: 'before' });
    const id = created.body.data.id;
    const res = await gw.request('PATCH', `/devices/${id}`, {
      name: 'after',
      webhook_url: 'https://hooks.example.com/in',
    });
    expect(res.status).toBe(200);
    expect(res.body.status).toBe(200);
    expect(res.body.data.name).toBe('after');
    expect(res.body.data.webhook_url).toBe('https://hooks.example.com/in');
    expect((await gw.request('GET', `/devices/${id}`)).body.data.webhook_url).toBe('https://hooks.example.com/in');

    for (const url of [
      'ftp://x.example.com',
      'hooks.example.com/in',
      '/relative',
      'http://',
      'javascript:alert(1)',
      5,
    ]) {
      const bad = await gw.request('PATCH', `/devices/${id}`, { webhook_url: url });
      expect(bad.status, String(url)).toBe(400);
      expect(bad.body.message).toBe('Validation failed');
      expect(bad.body.errors.webhook_url).toBeDefined();
    }
    const paced = await gw.request('PATCH', `/devices/${id}`, { send_interval_ms: 2500 });
    expect(paced.body.data.send_interval_ms).toBe(2500);
    for (const bad of [-1, 3_600_001, 1.5, '100']) {
      const res = await gw.request('PATCH', `/devices/${id}`, { send_interval_ms: bad });
      expect(res.status, String(bad)).toBe(400);
      expect(res.body.errors.send_interval_ms).toBeDefined();
    }
    expect(
      (await gw.request('PATCH', `/devices/${id}`, { send_interval_ms: null })).body.data.send_interval_ms,
    ).toBeNull();
    const cleared = await gw.request('PATCH', `/devices/${id}`, { webhook_url: null });
    expect(cleared.body.data.webhook_url).toBeNull();
    expect((await gw.request('PATCH', '/devices/999999', { name: 'x' })).body).toEqual({
      code: 404,
      status: 404,
      message: 'Device not found',
    });
  });

  it('refuses, naming it, a field PATCH cannot change, and changes nothing', async () => {
    const created = (await create({ package: 'BETA', name: 'fixed' })).body.data;
    for (const [field, value] of [
      ['package', 'BUSINESS'],
      ['status', 'SUSPENDED'],
      ['phone', '6281234567899'],
      ['quote_available', '999'],
      ['id', 1],
    ] as const) {
      const res = await gw.request('PATCH', `/devices/${created.id}`, { name: 'changed', [field]: value });
      expect(res.status, field).toBe(400);
      expect(res.body, field).toEqual({
        code: 400,
        status: 400,
        message: 'Validation failed',
        errors: { [field]: ['cannot be set by this request'] },
      });
    }
    // Every refused field at once, beside other failures.
    const several = await gw.request('PATCH', `/devices/${created.id}`, {
      package: 'BUSINESS',
      status: 'X',
      name: ' ',
    });
    expect(several.body.errors).toEqual({
      package: ['cannot be set by this request'],
      status: ['cannot be set by this request'],
      name: ['must not be blank'],
    });
    expect((await gw.request('GET', `/devices/${created.id}`)).body.data).toEqual(created);
  });

  it('refuses blank device names on create and on PATCH', async () => {
    const created = (await create({ package: 'BETA', name: 'named' })).body.data;
    for (const name of ['', '   ', '\t']) {
      const onCreate = await gw.request('POST', '/devices', { package: 'BETA', name });
      expect(onCreate.status, JSON.stringify(name)).toBe(400);
      expect(onCreate.body).toEqual({
        code: 400,
        status: 400,
        message: 'Validation failed',
        errors: { name: ['must not be blank'] },
      });
      const onPatch = await gw.request('PATCH', `/devices/${created.id}`, { name });
      expect(onPatch.body).toEqual({
        code: 400,
        status: 400,
        message: 'Validation failed',
        errors: { name: ['must not be blank'] },
      });
    }
    expect((await gw.request('PATCH', `/devices/${created.id}`, { name: ' padded ' })).body.data.name).toBe(' padded ');
  });

  it('deletes a device: gone from get and list, and deleting again is 404', async () => {
    const created = await create({ package: 'BETA', name: 'doomed' });
    const id = created.body.data.id;
    const res = await gw.request('DELETE', `/devices/${id}`);
    expect(res.status).toBe(200);
    expect(res.body.message).toBe('Device deleted');
    expect((await gw.request('GET', `/devices/${id}`)).status).toBe(404);
    const list = await gw.request('GET', '/devices?per_page=100');
    expect(list.body.data.some((d: { id: number }) => d.id === id)).toBe(false);
    expect((await gw.request('DELETE', `/devices/${id}`)).body).toEqual({
      code: 404,
      status: 404,
      message: 'Device not found',
    });
  });
});

describe.skipIf(noStoreAvailable)('device limit', () => {
  it('answers 403 Device limit exceeded past the default limit of 10, and counts deleted devices out', async () => {
    const gw = await startGateway();
    try {
      const ids: number[] = [];
      for (let i = 0; i < 10; i++)
        ids.push((await gw.request('POST', '/devices', { package: 'BETA', name: `n${i}` })).body.data.id);
      const over = await gw.request('POST', '/devices', { package: 'BETA', name: 'eleventh' });
      expect(over.status).toBe(403);
      expect(over.body).toMatchObject({ code: 403, status: 403, message: 'Device limit exceeded' });
      await gw.request('DELETE', `/devices/${ids[0]}`);
      expect((await gw.request('POST', '/devices', { package: 'BETA', name: 'replacement' })).status).toBe(201);
      await gw.app.services.accounts.setMaxDevices('default', 11);
      expect((await gw.request('POST', '/devices', { package: 'BETA', name: 'raised' })).status).toBe(201);
    } finally {
      await gw.close();
    }
  });

  it('is exact when many creations race: 40 at once against a limit of 7 create exactly 7', async () => {
    const gw = await startGateway();
    try {
      await gw.app.services.accounts.setMaxDevices('default', 7);
      const answers = await Promise.all(
        Array.from({ length: 40 }, (_, i) => gw.request('POST', '/devices', { package: 'BETA', name: `race${i}` })),
      );
      const statuses = answers.map((a) => a.status);
      expect(statuses.filter((s) => s === 201)).toHaveLength(7);
      expect(statuses.filter((s) => s === 403)).toHaveLength(33);
      expect((await gw.request('GET', '/devices')).body.meta.total).toBe(7);
    } finally {
      await gw.close();
    }
  });
});
