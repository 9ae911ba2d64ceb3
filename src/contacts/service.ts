/**
 * Checking whether numbers are on the network (docs/internals.md, Groups:
 * `POST /contacts/check`).
 *
 * Owns: which device asks (the one named, which must be connected), and the
 * answer per number: one entry per distinct number, in the order given; a
 * number that is not well-formed cannot be registered and is answered
 * `false` without asking the network.
 * Must never: know about HTTP or touch the store.
 */
import type { DeviceRow } from '../devices/repository.js';
import { ApiError } from '../errors.js';
import { isPhoneNumber } from '../shapes.js';
import { NetworkUnavailableError, type NetworkConnection } from '../network/network.js';

export interface ContactsServiceOptions {
  readonly devices: { findByPhone(accountId: number, phone: string): Promise<DeviceRow | undefined> };
  readonly connections: { connection(deviceId: number): NetworkConnection | null };
}

export interface ContactCheck {
  readonly phone: string;
  readonly registered: boolean;
}

export class ContactsService {
  constructor(private readonly options: ContactsServiceOptions) {}

  async check(accountId: number, input: { device: string; phones: readonly string[] }): Promise<ContactCheck[]> {
    const device = await this.options.devices.findByPhone(accountId, input.device);
    if (device === undefined) throw new ApiError('DEVICE_NOT_FOUND');
    if (device.status === 'SUSPENDED') throw new ApiError('DEVICE_SUSPENDED');
    const conn = this.options.connections.connection(device.id);
    if (conn === null) throw new ApiError('DEVICE_NOT_CONNECTED');
    const phones = [...new Set(input.phones)];
    const asked = phones.filter(isPhoneNumber);
    let answers: Array<{ phone: string; registered: boolean }> = [];
    if (asked.length > 0) {
      answers = await conn.checkNumbers(asked).catch((error: unknown) => {
        if (error instanceof NetworkUnavailableError) throw new ApiError('DEVICE_NOT_CONNECTED');
        throw error;
      });
    }
    const registered = new Map(answers.map((a) => [a.phone, a.registered === true]));
    return phones.map((phone) => ({ phone, registered: registered.get(phone) ?? false }));
  }
}
