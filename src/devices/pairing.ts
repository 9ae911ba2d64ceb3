/**
 * Pairing a device by QR code or pairing code, and logging it out (spec 4.4;
 * docs/internals.md, Devices and pairing; WhatsApp and sandbox accounts).
 *
 * Owns: the rules around the QR: a suspended device gets none, a paired one
 * is "connected" (or 409 when offline), otherwise the current code of the running attempt, drawn as
 * a PNG data URL.
 * Must never: answer with a stale code (the network rotates it; each call asks
 * for the current one).
 */
import { ApiError } from '../errors.js';
import { QrUnavailableError, type ConnectionManager } from './connections.js';
import { DeviceUnavailableError, LeaseLostError } from '../cluster/holdings.js';
import type { DeviceRow } from './repository.js';
import type { DevicesService } from './service.js';

export type QrAnswer =
  { readonly kind: 'connected' } | { readonly kind: 'qr'; readonly dataUrl: string; readonly expiresAt: number | null };

export class PairingService {
  constructor(
    private readonly devices: DevicesService,
    private readonly connections: ConnectionManager,
  ) {}

  /** Waits until what the network reported for these devices so far is recorded (see ConnectionManager.settled). */
  recorded(deviceIds: readonly number[]): Promise<void> {
    return this.connections.settled(deviceIds);
  }

  /**
   * The current QR text, or null when the device is paired and connected.
   * Paired but offline is 409 `Device offline, reconnecting`: the device
   * reconnects by itself and needs no QR. A pairing attempt ended while the
   * request waited answers what ended it: 404 when the device was deleted,
   * 403 when suspended, 409 `Device logged out` for a logout.
   */
  async qrText(accountId: number, deviceId: number): Promise<string | null> {
    const device = await this.devices.get(accountId, deviceId);
    if (device.status === 'SUSPENDED') throw new ApiError('DEVICE_SUSPENDED');
    if (device.paired_status === 'PAIRED') {
      if (device.connected === 1 || this.connections.isConnected(device.id)) return null;
      throw new ApiError('DEVICE_OFFLINE', { error: 'the device is paired; its connection is being re-established' });
    }
    let qr: string;
    try {
      qr = await this.connections.currentQr(device);
    } catch (error) {
      // No node can run the attempt right now: 503 with Retry-After, not a failed QR.
      if (error instanceof DeviceUnavailableError || error instanceof LeaseLostError) throw error;
      await this.whatEnded(accountId, deviceId);
      if (error instanceof QrUnavailableError && error.endedBy === 'release') {
        throw new ApiError('DEVICE_LOGGED_OUT', { error: 'the pairing attempt was ended by a logout' });
      }
      throw new ApiError('QR_FAILED', { error: (error as Error).message });
    }
    // A deletion or suspension that ran while the attempt started must not leave it running.
    const now = await this.devices.find(accountId, deviceId);
    if (now === undefined || now.status === 'SUSPENDED') {
      await this.connections.release(deviceId, { logout: false });
      await this.whatEnded(accountId, deviceId);
    }
    return qr;
  }

  /** Throws the answer for a device deleted or suspended meanwhile; returns otherwise. */
  private async whatEnded(accountId: number, deviceId: number): Promise<void> {
    const device = await this.devices.find(accountId, deviceId);
    if (device === undefined) throw new ApiError('DEVICE_NOT_FOUND');
    if (device.status === 'SUSPENDED') throw new ApiError('DEVICE_SUSPENDED');
  }

  async qr(accountId: number, deviceId: number): Promise<QrAnswer> {
    const text = await this.qrText(accountId, deviceId);
    if (text === null) return { kind: 'connected' };
    // Loaded on the first QR drawn, not at start (issue 25): most starts draw none.
    const { default: QRCode } = await import('qrcode');
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

  /** Drops and re-opens the device's connection (docs/internals.md, Whatspie compatibility); a suspended device has none to restart. */
  async restart(accountId: number, deviceId: number): Promise<DeviceRow> {
    const device = await this.devices.get(accountId, deviceId);
    if (device.status === 'SUSPENDED') throw new ApiError('DEVICE_SUSPENDED');
    await this.connections.restart(device);
    return this.devices.get(accountId, deviceId);
  }

  /**
   * A pairing code for the phone to type instead of scanning (docs/internals.md, WhatsApp and sandbox accounts), or null when the
   * device is already paired. A device created for a number pairs only from that number.
   */
  async pairingCode(accountId: number, deviceId: number, phone: string): Promise<string | null> {
    const device = await this.devices.get(accountId, deviceId);
    if (device.status === 'SUSPENDED') throw new ApiError('DEVICE_SUSPENDED');
    if (device.paired_status === 'PAIRED') return null;
    if (device.expected_phone !== null && device.expected_phone !== phone) {
      throw new ApiError('PHONE_MISMATCH', { error: `this device must be paired from ${device.expected_phone}` });
    }
    try {
      return await this.connections.pairingCode(device, phone);
    } catch (error) {
      if (error instanceof DeviceUnavailableError || error instanceof LeaseLostError) throw error;
      throw new ApiError('PAIRING_CODE_FAILED', { error: (error as Error).message });
    }
  }

  async logout(accountId: number, deviceId: number): Promise<DeviceRow> {
    const device = await this.devices.get(accountId, deviceId);
    await this.connections.logout(device);
    return this.devices.get(accountId, deviceId);
  }
}
