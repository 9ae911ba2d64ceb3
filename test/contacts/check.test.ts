// docs/internals.md, Groups: POST /contacts/check {device, phones} answers, per distinct number, whether it is on the network.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { noStoreAvailable, startGateway, type TestGateway } from '../helpers/gateway.js';
import { createPairedDevice } from '../helpers/pairing.js';

describe.skipIf(noStoreAvailable)('checking contacts', () => {
  let gw: TestGateway;
  let device: string;
  beforeAll(async () => {
    gw = await startGateway();
    device = (await createPairedDevice(gw, '6283499000001')).phone;
  });
  afterAll(() => gw?.close());

  it('answers registered (and is_on_whatsapp, the same) per number, once per distinct number, in the order given', async () => {
    await gw.request('POST', '/sandbox/phones', { phone: '6283412345678', registered: false, is_on_whatsapp: false });
    const res = await gw.request('POST', '/contacts/check', {
      device,
      phones: ['6283411112222', '6283411110000', '6283412345678', '6283411112222', '+62834', 'abc', '6283411110003'],
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toEqual({
      code: 200,
      status: 200,
      message: 'Contacts checked',
      data: [
        { phone: '6283411112222', registered: true, is_on_whatsapp: true },
        { phone: '6283411110000', registered: false, is_on_whatsapp: false },
        { phone: '6283412345678', registered: false, is_on_whatsapp: false },
        { phone: '+62834', registered: false, is_on_whatsapp: false },
        { phone: 'abc', registered: false, is_on_whatsapp: false },
        { phone: '6283411110003', registered: true, is_on_whatsapp: true },
      ],
    });
    expect((await gw.request('POST', '/api/contacts/check', { device, phones: ['6283411115555'] })).status).toBe(200);
  });

  it.each([
    [{ phones: ['6283411112222'] }, 400, 'Validation failed'],
    [{ device: '6283499000001' }, 400, 'Validation failed'],
    [{ device: '6283499000001', phones: [] }, 400, 'Validation failed'],
    [{ device: '6283499000001', phones: 'x' }, 400, 'Validation failed'],
    [{ device: '6283499000001', phones: [1] }, 400, 'Validation failed'],
    [
      { device: '6283499000001', phones: Array.from({ length: 101 }, (_, i) => `62834${i + 100000}`) },
      400,
      'Validation failed',
    ],
    [{ device: '+6283499000001', phones: ['6283411112222'] }, 400, 'Invalid phone number format'],
    [{ device: '6283499009999', phones: ['6283411112222'] }, 404, 'Device not found'],
  ])('refuses %j with %i %s', async (body, status, message) => {
    const res = await gw.request('POST', '/contacts/check', body);
    expect(res.status).toBe(status);
    expect(res.body).toMatchObject({ code: status, message });
  });

  it('answers 400 Device not connected for a device that is not connected', async () => {
    await gw.request('POST', '/devices', { package: 'BETA', name: 'idle', phone: '6283499000002' });
    const res = await gw.request('POST', '/contacts/check', { device: '6283499000002', phones: ['6283411112222'] });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ code: 400, status: 400, message: 'Device not connected' });
  });

  it('answers 404 for another account’s device', async () => {
    const other = await gw.app.services.accounts.createAccount('contacts-other');
    const otherToken = (await gw.app.services.accounts.createToken(other.id, 't')).token;
    const res = await gw.request('POST', '/contacts/check', { device, phones: ['6283411112222'] }, otherToken);
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ code: 404, status: 404, message: 'Device not found' });
  });
});
