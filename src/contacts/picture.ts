/**
 * Fetching a picture a client names by URL (a profile's or a group's; docs/api.md, Profile): through the guarded
 * fetcher media URLs use, up to the media images' size limit, and only JPEG or PNG (by the bytes).
 *
 * Owns: the picture's rules and the API errors a failed fetch answers with (those of an image message:
 * `Invalid image URL`, `File too large`, `Unable to download image`, `Unsupported file format`).
 * Must never: connect except through the guarded dispatcher, or hold more than the limit.
 */
import type { Dispatcher } from 'undici';
import { ApiError } from '../errors.js';
import { MEDIA_LIMITS } from '../messages/media.js';
import type { PictureUpload } from '../network/network.js';
import { fetchMedia, MediaFetchError, PRIVATE_DESTINATION_HINT, sniffImageType } from '../outbound/index.js';

/** A picture's size limit: the media images' (16 MB). */
export const PICTURE_MAX_BYTES = MEDIA_LIMITS.image;

/** What a route body names a picture with: an http(s) URL. */
export function readPictureUrl(value: unknown, field: string): string {
  if (typeof value !== 'string' || value.trim() === '' || value.length > 2048) {
    throw new ApiError('VALIDATION_FAILED', { errors: { [field]: ['is required: the http(s) URL of a JPEG or PNG'] } });
  }
  return value.trim();
}

export class PictureFetcher {
  constructor(private readonly dispatcher: Dispatcher) {}

  async fetch(url: string): Promise<PictureUpload> {
    let bytes: Uint8Array;
    try {
      bytes = (await fetchMedia(url, { maxBytes: PICTURE_MAX_BYTES, dispatcher: this.dispatcher })).bytes;
    } catch (error) {
      if (!(error instanceof MediaFetchError)) throw error;
      switch (error.reason) {
        case 'invalid_url':
          throw new ApiError('INVALID_IMAGE_URL', { error: error.detail });
        case 'blocked_address':
          throw new ApiError('INVALID_IMAGE_URL', { error: `${error.detail}; ${PRIVATE_DESTINATION_HINT}` });
        case 'too_large':
          throw new ApiError('FILE_TOO_LARGE', {
            error: `the picture is larger than ${PICTURE_MAX_BYTES / 1024 / 1024} MB`,
          });
        default:
          throw new ApiError('IMAGE_DOWNLOAD_FAILED', { error: error.detail });
      }
    }
    const type = sniffImageType(bytes);
    if (type !== 'image/jpeg' && type !== 'image/png') {
      throw new ApiError('UNSUPPORTED_FORMAT', { error: 'the picture must be a JPEG or PNG image' });
    }
    return { mimetype: type, base64: Buffer.from(bytes).toString('base64') };
  }
}
