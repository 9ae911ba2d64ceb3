/**
 * Media of a message being accepted (docs/internals.md, Sending): fetched once from its URL into the
 * store (media-intake.ts), its type checked against the bytes, and a refusal turned into the error the
 * spec names; or, for received media forwarded, copied in the store (src/media/forwarding.ts).
 *
 * Owns: the refusals of a media fetch (URL, address guard, size, busy, download, format), the type a
 * document is sent as, and naming a file from the answer when its request and URL named none.
 * Must never: keep a download it refused (it is discarded), log a media URL (it may carry a token), or
 * decide whether the message is accepted (the messages service does, after this).
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Dispatcher as HttpDispatcher } from 'undici';
import type { Clock } from '../clock.js';
import { ApiError } from '../errors.js';
import { copyForwardedMedia, type ForwardableMedia } from '../media/index.js';
import {
  MediaFetchError,
  PRIVATE_DESTINATION_HINT,
  sniffDocumentType,
  sniffImageType,
  sniffMediaType,
} from '../outbound/index.js';
import type { Store } from '../store/store.js';
import { fileNameAfterFetch } from './media.js';
import { MediaBusyError, MediaIntake } from './media-intake.js';
import type { MediaRequest, ValidatedMessage } from './validate.js';

export interface FetchedMedia {
  /** The download's chunks in the store (media-intake.ts). */
  readonly mediaId: string;
  readonly mimetype: string;
  /** The answer's Content-Disposition, which may name a file its URL did not. */
  readonly contentDisposition: string | null;
}

export interface MediaFetcherOptions {
  readonly store: Store;
  readonly clock: Clock;
  readonly dispatcher: HttpDispatcher;
  readonly timeoutMs: number;
  /** Operator log: refusals are noted at info (never the URL: it may carry a token). */
  readonly logger?: FastifyBaseLogger;
}

export class MediaFetcher {
  private readonly intake: MediaIntake;
  private readonly logger: FastifyBaseLogger | undefined;
  private readonly store: Store;
  private readonly clock: Clock;

  constructor(options: MediaFetcherOptions) {
    this.logger = options.logger;
    this.store = options.store;
    this.clock = options.clock;
    this.intake = new MediaIntake({
      store: options.store,
      clock: options.clock,
      dispatcher: options.dispatcher,
      timeoutMs: options.timeoutMs,
    });
  }

  /** Drops a fetched download (its request became no message). */
  discard(mediaId: string): Promise<void> {
    return this.intake.discard(mediaId);
  }

  /**
   * Received media sent on (a forward): copied in the store from the received message's media, never fetched over
   * HTTP (src/media/forwarding.ts decides what can be); its type is the one the network gave it. The send's size
   * limit of its kind holds as for a URL.
   */
  async fromStore(media: MediaRequest, stored: ForwardableMedia): Promise<FetchedMedia> {
    if (stored.size !== null && stored.size > media.maxBytes) {
      throw new ApiError('FILE_TOO_LARGE', { error: `larger than ${media.maxBytes / 1024 / 1024} MB` });
    }
    const mediaId = await copyForwardedMedia(this.store.db, this.clock, stored);
    return { mediaId, mimetype: stored.mimetype, contentDisposition: null };
  }

  /** Fetches the request's media into the store; throws the ApiError that refuses the send. */
  async fetch(media: MediaRequest): Promise<FetchedMedia> {
    const image = media.kind === 'image';
    let head: Uint8Array;
    let mediaId: string;
    let contentDisposition: string | null;
    try {
      ({
        mediaId,
        streamed: { head, contentDisposition },
      } = await this.intake.take(media.url, media.maxBytes));
    } catch (error) {
      if (error instanceof MediaBusyError) {
        this.logger?.info({ kind: media.kind, reason: 'busy' }, 'media fetch refused');
        throw new ApiError('TOO_MANY_REQUESTS', {
          error: 'too many media downloads under way; try again shortly',
          headers: { 'retry-after': '1' },
        });
      }
      if (!(error instanceof MediaFetchError)) throw error;
      this.logger?.info(
        {
          kind: media.kind,
          reason: error.reason,
          detail: error.detail,
          ...(error.status ? { status: error.status } : {}),
        },
        'media fetch refused',
      );
      const detail = { error: error.detail };
      switch (error.reason) {
        case 'invalid_url':
          throw new ApiError(image ? 'INVALID_IMAGE_URL' : 'INVALID_MEDIA_URL', detail);
        case 'blocked_address':
          throw new ApiError(image ? 'INVALID_IMAGE_URL' : 'INVALID_MEDIA_URL', {
            error: `${error.detail}; ${PRIVATE_DESTINATION_HINT}`,
          });
        case 'too_large':
          throw new ApiError('FILE_TOO_LARGE', { error: `larger than ${media.maxBytes / 1024 / 1024} MB` });
        default:
          throw new ApiError(image ? 'IMAGE_DOWNLOAD_FAILED' : 'MEDIA_DOWNLOAD_FAILED', detail);
      }
    }
    const sniffed = image || media.kind === 'sticker' ? sniffImageType(head) : sniffMediaType(head);
    const unsupported = (error: string): ApiError => {
      this.logger?.info({ kind: media.kind, reason: 'unsupported_format', detail: error }, 'media fetch refused');
      void this.intake.discard(mediaId);
      return new ApiError('UNSUPPORTED_FORMAT', { error });
    };
    if (image && sniffed === null) throw unsupported('the image is not JPEG, PNG, GIF or WebP');
    // A sticker is WebP by its bytes (RIFF…WEBPVP…), whatever its URL or the server's Content-Type say.
    if (media.kind === 'sticker' && sniffImageType(head) !== 'image/webp') throw unsupported('the sticker is not WebP');
    if (media.kind === 'video' && (sniffed === null || !sniffed.startsWith('video/'))) {
      throw unsupported('the video is not a recognised video format');
    }
    if (media.kind === 'audio' && (sniffed === null || !sniffed.startsWith('audio/'))) {
      throw unsupported('the audio is not a recognised audio format');
    }
    // A document's type, unless the client gave it, is what its bytes are (docs/internals.md, Whatspie compatibility): the
    // recipient's phone picks its viewer by it.
    const mimetype = media.mimetype ?? (media.kind === 'file' ? await sniffDocumentType(head) : sniffed);
    return { mediaId, mimetype: mimetype ?? 'application/octet-stream', contentDisposition };
  }
}

/**
 * The request with its file named, for a file the client did not name and whose URL names none
 * (docs/internals.md, Whatspie compatibility): what is stored, echoed and sent carries the name.
 */
export function withFileName(request: ValidatedMessage, contentDisposition: string | null): ValidatedMessage {
  const media = request.media;
  if (media === null || media.kind !== 'file' || media.fileName !== null) return request;
  const fileName = fileNameAfterFetch(media, contentDisposition);
  // The name goes right after the URL, where a given or URL-derived one is.
  const { document, ...rest } = request.params;
  return { ...request, params: { document, fileName, ...rest }, media: { ...media, fileName } };
}
