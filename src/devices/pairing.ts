/**
 * Pairing a device by QR code, and logging it out (spec 4.4; DECISIONS 3).
 *
 * Owns: the rules around the QR: a suspended device gets none, a paired one
 * is "connected", otherwise the current code of the running attempt, drawn as
 * a PNG data URL.
 * Must never: answer with a stale code (the network rotates it; each call asks
 * for the current one).
 */
import QRCode from 'qrcode';
import { ApiError } from '../http/errors.js';
import type { ConnectionManager } from './connections.js';
import type { DeviceRow } from './repository.js';
import type { DevicesService } from './service.js';

export type QrAnswer =
  { readonly kind: 'connected' } | { readonly kind: 'qr'; readonly dataUrl: string; readonly expiresAt: number | null };

export class PairingService {
  constructor(
    private readonly devices: DevicesService,
    private readonly connections: ConnectionManager,
  ) {}

  /** The current QR text, or null when the device is already paired. */
  async qrText(accountId: number, deviceId: number): Promise<string | null> {
    const device = await this.devices.get(accountId, deviceId);
    if (device.status === 'SUSPENDED') throw new ApiError('DEVICE_SUSPENDED');
    if (device.paired_status === 'PAIRED') return null;
    try {
      return await this.connections.currentQr(device);
    } catch (error) {
      throw new ApiError('QR_FAILED', { error: (error as Error).message });
    }
  }

  async qr(accountId: number, deviceId: number): Promise<QrAnswer> {
    const text = await this.qrText(accountId, deviceId);
    if (text === null) return { kind: 'connected' };
    try {
      const dataUrl = await QRCode.toDataURL(text, {
        errorCorrectionLevel: 'M',
        margin: 2,
        scale: 6,
        type: 'image/png',
      });
      return { kind: 'qr', dataUrl, expiresAt: this.connections.pairingEndsAt(deviceId) };
    } catch {
      throw new ApiError('QR_FAILED', { error: 'the QR image could not be drawn' });
    }
  }

  /** Drops and re-opens the device's connection (DECISIONS 12); a suspended device has none to restart. */
  async restart(accountId: number, deviceId: number): Promise<DeviceRow> {
    const device = await this.devices.get(accountId, deviceId);
    if (device.status === 'SUSPENDED') throw new ApiError('DEVICE_SUSPENDED');
    await this.connections.restart(device);
    return this.devices.get(accountId, deviceId);
  }

  async logout(accountId: number, deviceId: number): Promise<DeviceRow> {
    const device = await this.devices.get(accountId, deviceId);
    await this.connections.logout(device);
    return this.devices.get(accountId, deviceId);
  }
}
