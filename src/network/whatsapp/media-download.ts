/**
 * Incoming WhatsApp media (DECISIONS 15): what of a media message the gateway keeps to download it later (the
 * seam's IncomingMedia: a reference, the size, the plaintext's SHA-256), and the download itself through the
 * library: the encrypted bytes fetched from the media host and decrypted as they arrive.
 *
 * Owns: the reference's form (JSON of the media type, direct path, URL, media key and encrypted hash; the media key
 * is what decrypts it, so the reference is as private as the message) and which failures are worth a retry (the
 * media host's 404 and 410 mean the media is gone: `permanent`).
 * Must never: buffer the file (the library's stream is handed on as it is read), or announce a hash it did not get
 * from the message (the gateway checks the bytes against it).
 */
import { downloadContentFromMessage, type MediaType, type proto } from 'baileys';
import { NetworkMediaError, type IncomingMedia } from '../network.js';

type MediaItem = Pick<
  proto.Message.IImageMessage,
  'directPath' | 'url' | 'mediaKey' | 'fileSha256' | 'fileEncSha256' | 'fileLength'
>;

/** The media types the library derives keys for, by the seam's kind. */
const MEDIA_TYPES = {
  image: 'image',
  video: 'video',
  audio: 'audio',
  file: 'document',
  sticker: 'sticker',
} as const satisfies Record<string, MediaType>;

interface Reference {
  readonly type: MediaType;
  readonly directPath?: string;
  readonly url?: string;
  /** base64 */
  readonly mediaKey: string;
}

const bytes = (value: Uint8Array | null | undefined): Buffer | undefined =>
  value === null || value === undefined || value.length === 0 ? undefined : Buffer.from(value);

/** What the gateway keeps to download this media; undefined when the message gives no way to (no key or path). */
export function incomingMediaOf(kind: keyof typeof MEDIA_TYPES, item: MediaItem): IncomingMedia | undefined {
  const mediaKey = bytes(item.mediaKey);
  const directPath = typeof item.directPath === 'string' && item.directPath !== '' ? item.directPath : undefined;
  const url = typeof item.url === 'string' && item.url.startsWith('https://') ? item.url : undefined;
  if (mediaKey === undefined || (directPath === undefined && url === undefined)) return undefined;
  const reference: Reference = {
    type: MEDIA_TYPES[kind],
    ...(directPath === undefined ? {} : { directPath }),
    ...(url === undefined ? {} : { url }),
    mediaKey: mediaKey.toString('base64'),
  };
  const size = item.fileLength === null || item.fileLength === undefined ? NaN : Number(item.fileLength);
  const sha256 = bytes(item.fileSha256);
  return {
    ref: JSON.stringify(reference),
    ...(Number.isSafeInteger(size) && size >= 0 ? { size } : {}),
    ...(sha256?.length === 32 ? { sha256: sha256.toString('hex') } : {}),
  };
}

function referenceOf(ref: string): Reference {
  try {
    const parsed = JSON.parse(ref) as Partial<Reference>;
    if (typeof parsed.type === 'string' && typeof parsed.mediaKey === 'string') return parsed as Reference;
  } catch {
    // Not one of ours: refused below.
  }
  throw new NetworkMediaError('not a WhatsApp media reference', 'permanent');
}

/** The decrypted bytes, streamed from the media host. */
export async function downloadWhatsAppMedia(media: IncomingMedia): Promise<AsyncIterable<Uint8Array>> {
  const { type, directPath, url, mediaKey } = referenceOf(media.ref);
  try {
    return await downloadContentFromMessage(
      { mediaKey: Buffer.from(mediaKey, 'base64'), directPath: directPath ?? null, url: url ?? null },
      type,
    );
  } catch (error) {
    const status = (error as { output?: { statusCode?: number } }).output?.statusCode;
    const gone = status === 404 || status === 410;
    throw new NetworkMediaError(`media host: ${(error as Error).message}`, gone ? 'permanent' : 'transient');
  }
}
