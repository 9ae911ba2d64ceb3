/**
 * Signed media URLs (DECISIONS 15; docs/api.md, Media): `/media/{media_id}?expires=<unix s>&signature=<base64url>`,
 * the signature an HMAC-SHA256 of `<media_id>.<expires>` under a secret every node of the gateway shares (made once,
 * kept in the store), so a webhook receiver can fetch the media without the account's token until `expires`.
 *
 * Owns: the secret's loading, the URL's form and its check (in constant time).
 * Must never: hand out or log the secret, or accept a URL whose signature does not cover its own media id and time.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Clock } from '../clock.js';
import type { Store } from '../store/store.js';
import { incomingMediaRepository } from './incoming-repository.js';

const SECRET_NAME = 'media_urls';

export type SignatureCheck = 'valid' | 'invalid' | 'expired';

export interface MediaLinksOptions {
  readonly store: Store;
  readonly clock: Clock;
  /** How long a URL made now stays valid. */
  readonly ttlS: number;
  /** The gateway's public address (no trailing slash), asked when a URL is made: it may be known only once listening. */
  readonly baseUrl: () => string;
}

export class MediaLinks {
  private secret: Buffer | null = null;

  constructor(private readonly options: MediaLinksOptions) {}

  /** Reads (or makes, the first time any node starts) the shared secret. */
  async start(): Promise<void> {
    const { store, clock } = this.options;
    const secret = await incomingMediaRepository.secret(
      store.db,
      SECRET_NAME,
      randomBytes(32).toString('base64'),
      clock.now(),
    );
    this.secret = Buffer.from(secret, 'base64');
  }

  /** The absolute URL of the media, valid for the configured time from now. */
  signedUrl(mediaId: string): string {
    const expires = Math.floor(this.options.clock.now() / 1000) + this.options.ttlS;
    const signature = this.sign(mediaId, expires).toString('base64url');
    return `${this.options.baseUrl()}/media/${encodeURIComponent(mediaId)}?expires=${expires}&signature=${signature}`;
  }

  /** The media's URL without a signature: it is served with the account's bearer token (a forwarded copy names it). */
  plainUrl(mediaId: string): string {
    return `${this.options.baseUrl()}/media/${encodeURIComponent(mediaId)}`;
  }

  check(mediaId: string, expires: string, signature: string): SignatureCheck {
    if (!/^\d{1,12}$/.test(expires) || !/^[A-Za-z0-9_-]{43}$/.test(signature)) return 'invalid';
    const given = Buffer.from(signature, 'base64url');
    const expected = this.sign(mediaId, Number(expires));
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return 'invalid';
    return Number(expires) * 1000 <= this.options.clock.now() ? 'expired' : 'valid';
  }

  private sign(mediaId: string, expires: number): Buffer {
    if (this.secret === null) throw new Error('media links used before start()');
    return createHmac('sha256', this.secret).update(`${mediaId}.${expires}`).digest();
  }
}
