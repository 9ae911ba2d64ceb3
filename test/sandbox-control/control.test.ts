// docs/internals.md, The network seam and the sandbox: the sandbox control API and its error cases.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { noStoreAvailable, startGateway, type TestGateway } from '../helpers/gateway.js';
import { createPairedDevice, qrText, waitForDevice } from '../helpers/pairing.js';
import type { Network } from '../../src/network/network.js';

describe.skipIf(noStoreAvailable)('sandbox control API', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway();
  });
  afterAll(() => gw?.close());

  it('creates, updates and shows virtual phones', async () => {
    const created = await gw.request('POST', '/sandbox/phones', {
      phone: '6281230000001',
      name: 'Ani',
      privacy: 'nobody',
    });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({
      code: 200,
      status: 200,
      message: 'Phone saved',
      data: { phone: '6281230000001', name: 'Ani', privacy: 'nobody', registered: true, online: true, inbox: [] },
    });
    const updated = await gw.request('POST', '/sandbox/phones', { phone: '6281230000001', online: false });
    expect(updated.body.data).toMatchObject({ name: 'Ani', online: false });
    const shown = await gw.request('GET', '/sandbox/phones/6281230000001');
    expect(shown.body).toMatchObject({ code: 200, data: { phone: '6281230000001', online: false } });
  });

  it('knows the magic numbers without set-up', async () => {
    const phone = async (suffix: string) => (await gw.request('GET', `/sandbox/phones/62812377${suffix}`)).body.data;
    expect(await phone('0000')).toMatchObject({ registered: false });
    expect(await phone('0001')).toMatchObject({ registered: true, blocks_everyone: true });
    expect(await phone('0002')).toMatchObject({ registered: true, privacy: 'nobody' });
    expect(await phone('0003')).toMatchObject({ registered: true, online: false });
    expect(await phone('0004')).toMatchObject({ registered: true, rate_limited: true });
  });

  it.each([
    ['POST', '/sandbox/scan', { qr: 'not-a-code', phone: '6281230000009' }, 400, 'Invalid QR code'],
    ['POST', '/sandbox/scan', { qr: '2@abc', phone: '+6281230000009' }, 400, 'Invalid phone number format'],
    ['POST', '/sandbox/scan', { qr: '2@abc' }, 400, 'Validation failed'],
    ['POST', '/sandbox/phones', { phone: '0812' }, 400, 'Invalid phone number format'],
    ['POST', '/sandbox/phones', { phone: '6281230000009', privacy: 'friends' }, 400, 'Validation failed'],
    ['GET', '/sandbox/phones/6281239999998', undefined, 404, 'Phone not found'],
    ['POST', '/sandbox/phones/6281230000009/messages', { to: '6289999999999', text: 'hi' }, 404, 'Device not found'],
    ['POST', '/sandbox/phones/6281230000009/messages', { to: '6289999999999' }, 400, 'Validation failed'],
    ['POST', '/sandbox/phones/6281230000009/read', { message_id: 'nope' }, 404, 'Message not found'],
    ['POST', '/sandbox/groups', { name: 'g', members: [] }, 400, 'Validation failed'],
    ['POST', '/sandbox/devices/999999/disconnect', {}, 404, 'Device not found'],
  ] as const)('%s %s %j answers %i %s', async (method, url, body, status, message) => {
    const res = await gw.request(method, url, body);
    expect(res.status).toBe(status);
    expect(res.body.code).toBe(status);
    expect(res.body.message).toBe(message);
  });

  it('answers 404 Device not connected for a device with no connection, and 404 for another account’s device', async () => {
    const id = (await gw.request('POST', '/devices', { package: 'BETA', name: 'idle' })).body.data.id;
    const res = await gw.request('POST', `/sandbox/devices/${id}/disconnect`, {});
    expect(res.status).toBe(404);
    expect(res.body.message).toBe('Device not connected');

    const paired = await createPairedDevice(gw, '6281230000042');
    const other = await gw.app.services.accounts.createAccount('sandbox-other');
    const otherToken = (await gw.app.services.accounts.createToken(other.id, 't')).token;
    const foreign = await gw.request('POST', `/sandbox/devices/${paired.id}/disconnect`, {}, otherToken);
    expect(foreign.body).toEqual({ code: 404, status: 404, message: 'Device not found' });
  });

  it('creates network groups', async () => {
    const res = await gw.request('POST', '/sandbox/groups', {
      name: 'Team',
      members: [{ phone: '6281230000050', admin: true }, { phone: '6281230000051' }],
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      code: 201,
      status: 201,
      message: 'Group created',
      data: { subject: 'Team', capacity: 1024 },
    });
    expect(res.body.data.participants).toEqual([
      expect.objectContaining({ phone: '6281230000050', role: 'superadmin' }),
      expect.objectContaining({ phone: '6281230000051', role: null }),
    ]);
  });

  it('appears in the OpenAPI document', async () => {
    const doc = (await gw.request('GET', '/openapi.json', undefined, null)).body;
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining(['/sandbox/scan', '/sandbox/phones', '/sandbox/phones/{phone}', '/sandbox/groups']),
    );
  });
});

describe.skipIf(noStoreAvailable)('without the sandbox', () => {
  it('has no /sandbox routes when the network is not the sandbox', async () => {
    const network: Network = {
      description: 'a network without the sandbox capability',
      connect: () => {
        throw new Error('not used');
      },
      close: async () => undefined,
    };
    const gw = await startGateway({ build: { network } });
    try {
      const res = await gw.request('POST', '/sandbox/scan', { qr: 'x', phone: '6281230000009' });
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ code: 404, status: 404, message: 'Not found' });
      const doc = (await gw.request('GET', '/openapi.json', undefined, null)).body;
      expect(Object.keys(doc.paths).some((p) => p.startsWith('/sandbox'))).toBe(false);
    } finally {
      await gw.close();
    }
  });
});

describe.skipIf(noStoreAvailable)('QR text for scanning without a camera', () => {
  it('gives the same code the QR image decodes to', async () => {
    const gw = await startGateway();
    try {
      const id = (await gw.request('POST', '/devices', { package: 'BETA', name: 'text' })).body.data.id;
      const fromImage = await qrText(gw, id);
      const res = await gw.request('GET', `/sandbox/devices/${id}/qr`);
      expect(res.body).toEqual({ code: 200, status: 200, message: 'OK', data: { qr: fromImage } });
      await gw.request('POST', '/sandbox/scan', { qr: res.body.data.qr, phone: '6281230000077' });
      await waitForDevice(gw, id, (d) => d.paired_status === 'PAIRED');
      expect((await gw.request('GET', `/sandbox/devices/${id}/qr`)).body).toEqual({
        code: 200,
        status: 200,
        message: 'Device connected',
        data: { qr: '' },
      });
    } finally {
      await gw.close();
    }
  });
});
