// Issue 10 item 16 (newcomer F6, F7): schema validation errors on every route read like the
// message route's (no "must match a schema in anyOf", "must be null" or a raw regular expression),
// name every failing field at once, and stay bounded in size.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { noStoreAvailable, startGateway, type TestGateway } from '../helpers/gateway.js';

const PHONE_RULE =
  'must be a phone number in international format: digits only, country code first, no +, no leading 0, 7 to 15 digits';

describe.skipIf(noStoreAvailable)('validation messages of every route', () => {
  let gw: TestGateway;
  let deviceId: number;
  beforeAll(async () => {
    gw = await startGateway();
    const created = await gw.request('POST', '/devices', { package: 'BUSINESS', name: 'validation' });
    expect(created.status).toBe(201);
    deviceId = created.body.data.id;
  });
  afterAll(() => gw?.close());

  it('words a malformed phone at creation as the message route does', async () => {
    const res = await gw.request('POST', '/devices', { package: 'BUSINESS', name: 'x', phone: '+6281234567891' });
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual({ phone: [PHONE_RULE] });
  });

  it.each([
    [{ webhook_url: '' }, { webhook_url: ['must not be empty'] }],
    [{ send_interval_ms: -1 }, { send_interval_ms: ['must be at least 0'] }],
    [{ send_interval_ms: 'fast' }, { send_interval_ms: ['must be an integer'] }],
    [{ name: 5 }, { name: ['must be a string'] }],
  ])('words PATCH %j plainly', async (body, errors) => {
    const res = await gw.request('PATCH', `/devices/${deviceId}`, body);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 400, status: 400, message: 'Validation failed', errors });
  });

  it('names every failing field at once', async () => {
    const res = await gw.request('PATCH', `/devices/${deviceId}`, { webhook_url: '', send_interval_ms: -1, name: '' });
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual({
      webhook_url: ['must not be empty'],
      send_interval_ms: ['must be at least 0'],
      name: ['must not be blank'],
    });
  });

  it('never answers a schema combinator, a null branch or a regular expression', async () => {
    const bodies = [
      { phone: '+1', package: 'BUSINESS', name: 'x' },
      { phone: 5, package: 'BUSINESS', name: 'x' },
      { phone: '', package: 'BUSINESS', name: '' },
    ];
    for (const body of bodies) {
      const res = await gw.request('POST', '/devices', body);
      expect(res.status).toBe(400);
      const words = JSON.stringify(res.body.errors);
      expect(words).not.toMatch(/anyOf|must be null|\^\[|must NOT|must be string/);
    }
  });

  it('reports at most 100 paths for a huge malformed array', async () => {
    const phones = Array.from({ length: 5000 }, () => 'x'.repeat(65));
    const res = await gw.request('POST', '/contacts/check', { device: '6281234567890', phones });
    expect(res.status).toBe(400);
    expect(Object.keys(res.body.errors ?? {}).length).toBeLessThanOrEqual(100);
  });
});
