/**
 * Link previews of chat messages (DECISIONS 15): when a chat message is sent, the first link of its text is
 * fetched through the guarded fetcher media uses (the same address policy), its page read for a title,
 * description and image (link-preview-html.ts), and the image fetched as the preview's thumbnail.
 *
 * Owns: the preview's budget (one deadline of 5 s for the page and its image together, at most 1 MB each) and
 * turning every failure into "no preview".
 * Must never: fail or hold back a message beyond its budget (a preview that cannot be made is skipped), throw,
 * or log a URL (it may carry a token).
 */
import { performance } from 'node:perf_hooks';
import type { FastifyBaseLogger } from 'fastify';
import type { Dispatcher as HttpDispatcher } from 'undici';
import type { LinkPreview } from '../network/network.js';
import { fetchMedia, sniffImageType } from '../outbound/index.js';
import { URL_MAX_LENGTH } from './forms.js';
import { firstLink, summarisePage } from './link-preview-html.js';

/** A preview's whole budget (page and image). */
export const PREVIEW_TIMEOUT_MS = 5_000;
/** Largest page, and largest image, a preview reads. */
export const PREVIEW_MAX_BYTES = 1024 * 1024;
/** An image left less time than this is not started. */
const IMAGE_MIN_MS = 250;

export interface LinkPreviewerOptions {
  /** The guarded dispatcher media downloads use. */
  readonly dispatcher: HttpDispatcher;
  readonly timeoutMs?: number;
  readonly maxBytes?: number;
  readonly logger?: FastifyBaseLogger;
}

/** Makes the preview of a text's first link; the dispatcher asks it as it sends a chat message. */
export interface LinkPreviews {
  preview(text: string): Promise<LinkPreview | undefined>;
}

export class LinkPreviewer implements LinkPreviews {
  private readonly timeoutMs: number;
  private readonly maxBytes: number;

  constructor(private readonly options: LinkPreviewerOptions) {
    this.timeoutMs = options.timeoutMs ?? PREVIEW_TIMEOUT_MS;
    this.maxBytes = options.maxBytes ?? PREVIEW_MAX_BYTES;
  }

  /** The preview of the text's first link, or undefined: no link, or none could be made (never throws). */
  async preview(text: string): Promise<LinkPreview | undefined> {
    const url = firstLink(text, URL_MAX_LENGTH);
    if (url === null) return undefined;
    const started = performance.now();
    try {
      const page = await fetchMedia(url, {
        maxBytes: this.maxBytes,
        timeoutMs: this.timeoutMs,
        dispatcher: this.options.dispatcher,
      });
      const summary = summarisePage(new TextDecoder('utf-8').decode(page.bytes));
      if (summary.title === undefined) {
        this.skipped('the page has no title');
        return undefined;
      }
      const remaining = this.timeoutMs - (performance.now() - started);
      const thumbnail =
        summary.image === undefined || remaining < IMAGE_MIN_MS
          ? undefined
          : await this.thumbnail(summary.image, page.finalUrl, remaining);
      return {
        url,
        title: summary.title,
        ...(summary.description === undefined ? {} : { description: summary.description }),
        ...(thumbnail === undefined ? {} : { thumbnail }),
      };
    } catch (error) {
      this.skipped((error as Error).message);
      return undefined;
    }
  }

  /** The page's image when it is one (JPEG, PNG, GIF or WebP by its bytes), else undefined. */
  private async thumbnail(
    image: string,
    pageUrl: string,
    timeoutMs: number,
  ): Promise<LinkPreview['thumbnail'] | undefined> {
    let absolute: string;
    try {
      absolute = new URL(image, pageUrl).toString();
    } catch {
      return undefined;
    }
    try {
      const fetched = await fetchMedia(absolute, {
        maxBytes: this.maxBytes,
        timeoutMs: Math.round(timeoutMs),
        dispatcher: this.options.dispatcher,
      });
      const mimetype = sniffImageType(fetched.bytes);
      if (mimetype === null) return undefined;
      return { mimetype, base64: Buffer.from(fetched.bytes).toString('base64') };
    } catch (error) {
      // The preview goes without its image.
      this.skipped(`image: ${(error as Error).message}`);
      return undefined;
    }
  }

  private skipped(reason: string): void {
    this.options.logger?.info({ reason }, 'link preview skipped');
  }
}
