/**
 * The device's own profile on the network (DECISIONS 16; docs/api.md, Profile): `GET /devices/{id}/profile` and
 * `PUT /devices/{id}/profile {name?, about?, picture_url?}`.
 *
 * Owns: the body's rules (at least one field; a name of 1 to NAME_MAX characters, an about text of up to
 * ABOUT_MAX; the picture fetched through the guarded fetcher, JPEG or PNG) and their order: every field is
 * checked, then the picture fetched, and only then is the network asked, so a refused request changes nothing.
 * Must never: know about HTTP, or answer a change as made that the network refused.
 */
import type { DeviceRow } from '../devices/repository.js';
import { devicesRepository } from '../devices/repository.js';
import { ApiError } from '../errors.js';
import type { ProfileChanges } from '../network/network.js';
import type { Store } from '../store/store.js';
import { unreachable, type ContactBook } from './book.js';
import { readPictureUrl, type PictureFetcher } from './picture.js';

/** WhatsApp's limits: a profile name of at most 25 characters, an about text of at most 139. */
export const NAME_MAX = 25;
export const ABOUT_MAX = 139;

export interface ProfileJson {
  readonly name: string | null;
  readonly about: string | null;
  readonly picture_url: string | null;
}

export interface ProfileOptions {
  readonly store: Store;
  readonly book: ContactBook;
  readonly pictures: PictureFetcher;
}

export class ProfileService {
  constructor(private readonly options: ProfileOptions) {}

  async get(accountId: number, deviceId: number): Promise<ProfileJson> {
    const device = await this.device(accountId, deviceId);
    const profile = await this.options.book.connection(device).getProfile().catch(unreachable);
    return { name: profile.name, about: profile.about, picture_url: profile.pictureUrl };
  }

  async update(accountId: number, deviceId: number, body: unknown): Promise<ProfileJson> {
    const input = readProfile(body);
    const device = await this.device(accountId, deviceId);
    const conn = this.options.book.connection(device);
    const changes: ProfileChanges = {
      ...(input.name === undefined ? {} : { name: input.name }),
      ...(input.about === undefined ? {} : { about: input.about }),
      ...(input.pictureUrl === undefined ? {} : { picture: await this.options.pictures.fetch(input.pictureUrl) }),
    };
    const profile = await conn.updateProfile(changes).catch(unreachable);
    return { name: profile.name, about: profile.about, picture_url: profile.pictureUrl };
  }

  private async device(accountId: number, deviceId: number): Promise<DeviceRow> {
    const device = await devicesRepository.find(this.options.store.db, accountId, deviceId);
    if (device === undefined || device.deleted_at !== null) throw new ApiError('DEVICE_NOT_FOUND');
    return device;
  }
}

/** `{name?, about?, picture_url?}`, at least one; else 400 `Validation failed` naming each field. */
export function readProfile(body: unknown): { name?: string; about?: string; pictureUrl?: string } {
  const fields = typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {};
  const errors: Record<string, string[]> = {};
  const out: { name?: string; about?: string; pictureUrl?: string } = {};
  if (fields.name !== undefined) {
    const name = typeof fields.name === 'string' ? fields.name.trim() : '';
    if (name === '' || [...name].length > NAME_MAX) errors.name = [`must be a text of 1 to ${NAME_MAX} characters`];
    else out.name = name;
  }
  if (fields.about !== undefined) {
    if (typeof fields.about !== 'string' || [...fields.about].length > ABOUT_MAX) {
      errors.about = [`must be a text of at most ${ABOUT_MAX} characters`];
    } else out.about = fields.about;
  }
  if (fields.picture_url !== undefined) {
    try {
      out.pictureUrl = readPictureUrl(fields.picture_url, 'picture_url');
    } catch {
      errors.picture_url = ['must be the http(s) URL of a JPEG or PNG image'];
    }
  }
  if (Object.keys(errors).length === 0 && Object.keys(out).length === 0) {
    errors.name = ['give at least one of name, about and picture_url'];
  }
  if (Object.keys(errors).length > 0) throw new ApiError('VALIDATION_FAILED', { errors });
  return out;
}
