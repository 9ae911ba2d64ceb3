/**
 * Incoming media of one device's connection (DECISIONS 15): the download from the media host (media-download.ts)
 * and, when the host's copy expired (404/410), the request to the sender's phone to upload it again, made over the
 * device's socket (the library's `updateMediaMessage`: an encrypted media-retry receipt, answered by the phone with
 * an encrypted notification naming the new copy's path).
 *
 * Owns: wiring that to the connection: the socket it asks on (only an open one), how long it waits for the phone's
 * answer, and what an answer that is no new copy means (the phone no longer has the media: `permanent`; no answer,
 * not connected, or another failure: `transient`, tried again by the gateway's retries).
 * Must never: open or end a socket (connection.ts does), wait for the phone without a bound, or hand back bytes it
 * did not download after the re-upload.
 */
import type { WAMessage } from 'baileys';
import { NetworkMediaError, type IncomingMedia } from '../network.js';
import type { ConnectionContext } from './connection-context.js';
import {
  downloadWhatsAppMedia,
  reuploadMessage,
  type MediaFetch,
  type MediaMessageKey,
  type Reference,
} from './media-download.js';
import type { SocketPort } from './socket-port.js';

/** How long the sender's phone has to answer a re-upload request. */
export const REUPLOAD_TIMEOUT_MS = 30_000;

/** The phone's answers that mean it cannot upload the media again (library: not found, decryption error). */
const NO_COPY = new Set([404, 410, 412]);

export class ConnectionMedia {
  constructor(
    private readonly ctx: ConnectionContext,
    private readonly timeoutMs = REUPLOAD_TIMEOUT_MS,
    /** The library's download from the media host (replaced in tests). */
    private readonly fetch?: MediaFetch,
  ) {}

  /** From the media host over HTTPS (the socket is not needed unless the host's copy expired). */
  readonly download = (media: IncomingMedia): Promise<AsyncIterable<Uint8Array>> =>
    downloadWhatsAppMedia(media, (reference) => this.reupload(reference), this.fetch);

  private async reupload(reference: Reference & { readonly key: MediaMessageKey }): Promise<Reference> {
    let socket: SocketPort;
    try {
      socket = this.ctx.open();
    } catch {
      throw new NetworkMediaError(
        'the media host’s copy expired; the phone is asked again once connected',
        'transient',
      );
    }
    const message = reuploadMessage(reference);
    let timer: NodeJS.Timeout | undefined;
    const asked = socket.updateMediaMessage(message);
    // Answered after the wait gave up (or the socket closed meanwhile): nobody is listening any more.
    asked.catch(() => undefined);
    try {
      const updated = await Promise.race([
        asked,
        new Promise<never>((_, reject) => {
          timer = setTimeout(
            () => reject(new NetworkMediaError('the phone did not answer the re-upload request', 'transient')),
            this.timeoutMs,
          );
        }),
      ]);
      return renewed(reference, updated);
    } catch (error) {
      if (error instanceof NetworkMediaError) throw error;
      const status = (error as { output?: { statusCode?: number } }).output?.statusCode;
      throw new NetworkMediaError(
        `re-upload: ${(error as Error).message}`,
        status !== undefined && NO_COPY.has(status) ? 'permanent' : 'transient',
      );
    } finally {
      clearTimeout(timer);
    }
  }
}

/**
 * The reference to the copy the phone uploaded again (the library wrote its path into the message). It is fetched
 * from the media host the message named (the library's own host name is known only once this socket uploaded).
 */
function renewed(reference: Reference, updated: WAMessage): Reference {
  const content = (updated.message as Record<string, { directPath?: string | null; url?: string | null } | undefined>)[
    `${reference.type}Message`
  ];
  const directPath = content?.directPath;
  if (typeof directPath !== 'string' || !directPath.startsWith('/')) {
    throw new NetworkMediaError('the phone’s re-upload named no new copy', 'permanent');
  }
  const { url: before, ...rest } = reference;
  const given = content?.url;
  const url =
    before !== undefined
      ? `https://${new URL(before).host}${directPath}`
      : typeof given === 'string' && given.startsWith('https://')
        ? given
        : undefined;
  return { ...rest, directPath, ...(url === undefined ? {} : { url }) };
}
