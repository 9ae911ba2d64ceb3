// Pairs a device through the sandbox exactly as a user would: fetch the QR
// image, decode it, let a phone "scan" it, and wait for PAIRED + connected.
import { expect } from 'vitest';
import type { TestGateway } from './gateway.js';
import { decodeQrDataUrl } from './qr.js';
import { WAIT_TIMEOUT_MS, waitFor } from './wait.js';

export async function qrText(gw: TestGateway, deviceId: number, token?: string): Promise<string> {
  const res = await gw.request('GET', `/devices/${deviceId}/qr?response_type=url`, undefined, token);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return decodeQrDataUrl(res.body.data.qr);
}

export async function waitForDevice(
  gw: TestGateway,
  deviceId: number,
  accept: (d: any) => boolean,
  what = 'device state',
  timeoutMs = WAIT_TIMEOUT_MS,
) {
  return waitFor(async () => (await gw.request('GET', `/devices/${deviceId}`)).body.data, accept, { what, timeoutMs });
}

export async function createPairedDevice(gw: TestGateway, phone: string, body: Record<string, unknown> = {}) {
  const created = await gw.request('POST', '/devices', { package: 'BUSINESS', name: `device ${phone}`, ...body });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const id = created.body.data.id as number;
  const scan = await gw.request('POST', '/sandbox/scan', { qr: await qrText(gw, id), phone });
  expect(scan.status, JSON.stringify(scan.body)).toBe(200);
  return waitForDevice(gw, id, (d) => d.paired_status === 'PAIRED' && d.connected === true, 'paired and connected');
}
