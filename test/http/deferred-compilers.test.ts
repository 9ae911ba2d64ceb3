// Issue 25: request validators and response serializers are compiled on a route's first request, not for every
// route at start. The first request of a route is checked and answered as before; every schema still compiles.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compileDeferredSerializers } from '../../src/http/serialization.js';
import { compileDeferredValidators } from '../../src/http/validation.js';
import { noStoreAvailable, startGateway, type TestGateway } from '../helpers/gateway.js';

describe.skipIf(noStoreAvailable)('validators and serializers compiled on first use', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway();
    await gw.app.ready();
  });
  afterAll(() => gw?.close());

  it('the first request of a route is validated: a refused body names its fields', async () => {
    const res = await gw.request('PATCH', '/api/devices/1', { send_interval_ms: -1, name: 5 });
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual({ send_interval_ms: ['must be at least 0'], name: ['must be a string'] });
  });

  it('the first requests of routes with a path or query parameter refuse a number not written in decimal', async () => {
    expect((await gw.request('GET', '/devices/0x1')).body).toMatchObject({ status: 404, message: 'Device not found' });
    const res = await gw.request('GET', '/events?limit=0x1');
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual({ limit: ['must be a whole number in decimal digits'] });
  });

  it('the first answer of a route is serialized by its schema', async () => {
    const created = await gw.request('POST', '/devices', { package: 'BUSINESS', name: 'first' });
    expect(created.status).toBe(201);
    const listed = await gw.request('GET', '/api/devices');
    expect(listed.status).toBe(200);
    expect(listed.body.data).toEqual([expect.objectContaining({ id: created.body.data.id, name: 'first' })]);
  });

  it('every route’s schemas compile (what the start no longer proves)', () => {
    // Most were left to their first request: the start compiled none of them.
    expect(compileDeferredValidators(gw.app)).toBeGreaterThan(20);
    expect(compileDeferredValidators(gw.app)).toBe(0);
    expect(compileDeferredSerializers(gw.app)).toBeGreaterThan(20);
    expect(compileDeferredSerializers(gw.app)).toBe(0);
  });
});
