/**
 * A device's contacts (DECISIONS 16; docs/api.md, Contacts): the list (its address book on the network plus every
 * number it exchanged messages with), one contact's profile (cached up to 24 hours), blocking and unblocking, and
 * the blocked list.
 *
 * Owns: which device a request names (`device`: its number or its id; another account's is 404 `Device not
 * found`), the cache rule (a profile read from the network is answered for CONTACT_CACHE_MS; a block or unblock
 * through the gateway shows at once; a `contact_changed` from the network drops it), and the answer shapes.
 * Must never: know about HTTP, answer a stale profile as fresh, or hold a transaction while the network works.
 */
import type { Clock } from '../clock.js';
import type { DeviceRow } from '../devices/repository.js';
import { devicesRepository } from '../devices/repository.js';
import { ApiError } from '../errors.js';
import { NetworkNotFoundError, NetworkUnavailableError, type NetworkConnection } from '../network/network.js';
import { isPhoneNumber, PHONE_RULE } from '../shapes.js';
import type { Store } from '../store/store.js';
import { contactsRepository, type ContactProfileRow } from './repository.js';

/** How long a contact's profile read from the network is answered from the store. */
export const CONTACT_CACHE_MS = 24 * 60 * 60 * 1000;

export interface ContactJson {
  readonly phone: string;
  readonly name: string | null;
  readonly notify_name: string | null;
  readonly is_business: boolean;
}

export interface ContactProfileJson {
  readonly phone: string;
  readonly name: string | null;
  readonly about: string | null;
  readonly profile_picture_url: string | null;
  readonly registered: boolean;
  readonly blocked: boolean;
}

export interface ContactBookOptions {
  readonly store: Store;
  readonly clock: Clock;
  readonly devices: { findByPhone(accountId: number, phone: string): Promise<DeviceRow | undefined> };
  readonly connections: { connection(deviceId: number): NetworkConnection | null };
}

/** A number in a path: well-formed, or 400 `Invalid phone number format` naming the field. */
export function readPhone(phone: string, field = 'phone'): string {
  if (!isPhoneNumber(phone)) throw new ApiError('INVALID_PHONE', { errors: { [field]: [PHONE_RULE] } });
  return phone;
}

/** The network refused or could not answer: the API error for it. */
export function unreachable(error: unknown): never {
  if (error instanceof NetworkUnavailableError) throw new ApiError('DEVICE_NOT_CONNECTED');
  throw error;
}

function present(row: ContactProfileRow): ContactProfileJson {
  return {
    phone: row.phone,
    name: row.name,
    about: row.about,
    profile_picture_url: row.picture_url,
    registered: row.registered === 1,
    blocked: row.blocked === 1,
  };
}

export class ContactBook {
  constructor(private readonly options: ContactBookOptions) {}

  /**
   * The device a request names: its number, or (digits that are no device's number) its id. Absent: 400
   * `Validation failed`; neither form: 400 `Invalid phone number format`; another account's: 404.
   */
  async device(accountId: number, device: unknown): Promise<DeviceRow> {
    if (device === undefined || device === '') {
      throw new ApiError('VALIDATION_FAILED', { errors: { device: ['is required: the device’s number or id'] } });
    }
    const text = String(device);
    if (!/^[0-9]{1,15}$/.test(text)) {
      throw new ApiError('INVALID_PHONE', { errors: { device: ['must be the device’s phone number or its id'] } });
    }
    const byPhone = isPhoneNumber(text) ? await this.options.devices.findByPhone(accountId, text) : undefined;
    // Not a device's number: the digits may be its id.
    const id = Number(text);
    const byId =
      byPhone === undefined && id >= 1 && Number.isSafeInteger(id)
        ? await devicesRepository.find(this.options.store.db, accountId, id)
        : undefined;
    const found = byPhone ?? byId;
    if (found === undefined || found.deleted_at !== null) throw new ApiError('DEVICE_NOT_FOUND');
    return found;
  }

  /** The device's live connection: 400 `Device suspended` / `Device not connected` otherwise. */
  connection(device: DeviceRow): NetworkConnection {
    if (device.status === 'SUSPENDED') throw new ApiError('DEVICE_SUSPENDED');
    const conn = this.options.connections.connection(device.id);
    if (conn === null) throw new ApiError('DEVICE_NOT_CONNECTED');
    return conn;
  }

  /** `GET /contacts?device=`: the address book, then every other number the device exchanged messages with. */
  async list(accountId: number, deviceRef: unknown): Promise<ContactJson[]> {
    const device = await this.device(accountId, deviceRef);
    const book = await this.connection(device).listContacts().catch(unreachable);
    const contacts = new Map<string, ContactJson>();
    for (const entry of book) {
      contacts.set(entry.phone, {
        phone: entry.phone,
        name: entry.name,
        notify_name: entry.notifyName,
        is_business: entry.isBusiness,
      });
    }
    for (const phone of await contactsRepository.exchanged(this.options.store.db, device.id)) {
      if (isPhoneNumber(phone) && !contacts.has(phone) && phone !== device.phone) {
        contacts.set(phone, { phone, name: null, notify_name: null, is_business: false });
      }
    }
    return [...contacts.values()].sort((a, b) => a.phone.localeCompare(b.phone));
  }

  /** `GET /contacts/{phone}?device=`: from the store when read from the network less than 24 hours ago. */
  async get(accountId: number, deviceRef: unknown, phone: string): Promise<ContactProfileJson> {
    readPhone(phone);
    const device = await this.device(accountId, deviceRef);
    const { db } = this.options.store;
    const cached = await contactsRepository.find(db, device.id, phone);
    if (cached !== undefined && this.options.clock.now() - cached.fetched_at < CONTACT_CACHE_MS) return present(cached);
    const profile = await this.connection(device)
      .getContact(phone)
      .catch((error: unknown) => {
        if (error instanceof NetworkNotFoundError)
          throw new ApiError('INVALID_PHONE', { errors: { phone: [PHONE_RULE] } });
        return unreachable(error);
      });
    const row: ContactProfileRow = {
      device_id: device.id,
      phone,
      name: profile.name,
      about: profile.about,
      picture_url: profile.pictureUrl,
      registered: profile.registered ? 1 : 0,
      blocked: profile.blocked ? 1 : 0,
      fetched_at: this.options.clock.now(),
    };
    await contactsRepository.save(db, row);
    return present(row);
  }

  /** `POST /contacts/{phone}/block|unblock {device}`: done on the network; a cached profile shows it at once. */
  async setBlocked(
    accountId: number,
    deviceRef: unknown,
    phone: string,
    blocked: boolean,
  ): Promise<{ phone: string; blocked: boolean }> {
    readPhone(phone);
    const device = await this.device(accountId, deviceRef);
    await this.connection(device)
      .setBlocked(phone, blocked)
      .catch((error: unknown) => {
        if (error instanceof NetworkNotFoundError)
          throw new ApiError('INVALID_PHONE', { errors: { phone: [PHONE_RULE] } });
        return unreachable(error);
      });
    await contactsRepository.setBlocked(this.options.store.db, device.id, phone, blocked);
    return { phone, blocked };
  }

  /** `GET /contacts/blocked?device=`: the numbers the device blocked, as the network holds them. */
  async blocked(accountId: number, deviceRef: unknown): Promise<Array<{ phone: string }>> {
    const device = await this.device(accountId, deviceRef);
    const phones = await this.connection(device).listBlocked().catch(unreachable);
    return phones.map((phone) => ({ phone }));
  }
}
