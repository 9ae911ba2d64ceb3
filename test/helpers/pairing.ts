// Pairs a device through the sandbox as a user would: take the QR's code, let a
// phone "scan" it, and wait for PAIRED + connected. `qrText` reads the code off
// the QR image as a phone camera would (the tests of the image); `createPairedDevice`
// takes the same code as text from the sandbox (test/sandbox-control/control.test.ts
// shows the two are the same).
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

/**
 * The text of the device's current pairing QR as the sandbox gives it (`GET /sandbox/devices/{id}/qr`, the same
 * attempt and code as the image): for tests that only need a paired device. Drawing and decoding the image for each
 * of them was about 5% of the suite's CPU; the tests of the image itself use `qrText`.
 */
export async function sandboxQrText(gw: TestGateway, deviceId: number, token?: string): Promise<string> {
  const res = await gw.request('GET', `/sandbox/devices/${deviceId}/qr`, undefined, token);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.data.qr as string;
}

export async function createPairedDevice(gw: TestGateway, phone: string, body: Record<string, unknown> = {}) {
  const created = await gw.request('POST', '/devices', { package: 'BUSINESS', name: `device ${phone}`, ...body });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const id = created.body.data.id as number;
  const scan = await gw.request('POST', '/sandbox/scan', { qr: await sandboxQrText(gw, id), phone });
  expect(scan.status, JSON.stringify(scan.body)).toBe(200);
  return waitForDevice(gw, id, (d) => d.paired_status === 'PAIRED' && d.connected === true, 'paired and connected');
}
