/**
 * Incoming WhatsApp media (DECISIONS 15): what of a media message the gateway keeps to download it later (the
 * seam's IncomingMedia: a reference, the size, the plaintext's SHA-256), and the download itself through the
 * library: the encrypted bytes fetched from the media host and decrypted as they arrive.
 *
 * Owns: the reference's form (JSON of the media type, direct path, URL, media key and the message's key; the media
 * key is what decrypts it, so the reference is as private as the message), and which failures are worth a retry:
 * the media host's 404 and 410 mean its copy expired, so the sender's phone is asked once to upload it again
 * (`reupload`, connection-media.ts) and the new copy is downloaded; still gone (or nobody to ask): `permanent`.
 * Must never: buffer the file (the library's stream is handed on as it is read), or announce a hash it did not get
 * from the message (the gateway checks the bytes against it).
 */
import { downloadContentFromMessage, type MediaType, type proto, type WAMessage, type WAMessageKey } from 'baileys';
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

/** The message's key as a media re-upload request names it (the sender's phone finds its message by it). */
export interface MediaMessageKey {
  readonly remoteJid: string;
  readonly id: string;
  readonly fromMe: boolean;
  readonly participant?: string;
}

export interface Reference {
  readonly type: MediaType;
  readonly directPath?: string;
  readonly url?: string;
  /** base64 */
  readonly mediaKey: string;
  /** The message it came in (references stored before re-uploads were asked for have none). */
  readonly key?: MediaMessageKey;
}

/** Asks the sender's phone to upload the media again; answers the reference to the new copy, or throws a NetworkMediaError. */
export type ReUpload = (reference: Reference & { readonly key: MediaMessageKey }) => Promise<Reference>;

const bytes = (value: Uint8Array | null | undefined): Buffer | undefined =>
  value === null || value === undefined || value.length === 0 ? undefined : Buffer.from(value);

/** The message key kept with a reference, when the message has a usable one. */
export function mediaMessageKey(key: WAMessageKey | null | undefined): MediaMessageKey | undefined {
  if (typeof key?.remoteJid !== 'string' || typeof key.id !== 'string' || key.id === '') return undefined;
  return {
    remoteJid: key.remoteJid,
    id: key.id,
    fromMe: key.fromMe === true,
    ...(typeof key.participant === 'string' && key.participant !== '' ? { participant: key.participant } : {}),
  };
}

/**
 * What the gateway keeps to download this media; undefined when the message gives no way to (no key or path).
 * `messageKey` lets the sender's phone be asked to upload it again once the media host's copy expired.
 */
export function incomingMediaOf(
  kind: keyof typeof MEDIA_TYPES,
  item: MediaItem,
  messageKey?: MediaMessageKey,
): IncomingMedia | undefined {
  const mediaKey = bytes(item.mediaKey);
  const directPath = typeof item.directPath === 'string' && item.directPath !== '' ? item.directPath : undefined;
  const url = typeof item.url === 'string' && item.url.startsWith('https://') ? item.url : undefined;
  if (mediaKey === undefined || (directPath === undefined && url === undefined)) return undefined;
  const reference: Reference = {
    type: MEDIA_TYPES[kind],
    ...(directPath === undefined ? {} : { directPath }),
    ...(url === undefined ? {} : { url }),
    mediaKey: mediaKey.toString('base64'),
    ...(messageKey === undefined ? {} : { key: messageKey }),
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

/** The message a re-upload request is made for: the key and the media's key, path and URL, as the library reads them. */
export function reuploadMessage(reference: Reference & { readonly key: MediaMessageKey }): WAMessage {
  const media = {
    mediaKey: Buffer.from(reference.mediaKey, 'base64'),
    ...(reference.directPath === undefined ? {} : { directPath: reference.directPath }),
    ...(reference.url === undefined ? {} : { url: reference.url }),
  };
  return { key: { ...reference.key }, message: { [`${reference.type}Message`]: media } };
}

/** The media host's status when it said the copy is gone (404, 410). */
function goneFromHost(error: unknown): boolean {
  const status = (error as { output?: { statusCode?: number } }).output?.statusCode;
  return status === 404 || status === 410;
}

/** A download of the bytes a reference names, decrypted as they are read. */
export type MediaFetch = (reference: Reference) => Promise<AsyncIterable<Uint8Array>>;

function fetchDecrypted({ type, directPath, url, mediaKey }: Reference): Promise<AsyncIterable<Uint8Array>> {
  return downloadContentFromMessage(
    { mediaKey: Buffer.from(mediaKey, 'base64'), directPath: directPath ?? null, url: url ?? null },
    type,
  );
}

/**
 * The decrypted bytes, streamed from the media host. When the host's copy expired and `reupload` is given (with
 * the message's key kept), the sender's phone is asked to upload it again, once, and the new copy is downloaded.
 * `fetch` is the library's download (replaced in tests).
 */
export async function downloadWhatsAppMedia(
  media: IncomingMedia,
  reupload?: ReUpload,
  fetch: MediaFetch = fetchDecrypted,
): Promise<AsyncIterable<Uint8Array>> {
  const reference = referenceOf(media.ref);
  try {
    return await fetch(reference);
  } catch (error) {
    const { key } = reference;
    if (!goneFromHost(error) || reupload === undefined || key === undefined) throw mediaError(error);
  }
  const renewed = await reupload({ ...reference, key: reference.key! });
  try {
    return await fetch(renewed);
  } catch (error) {
    throw mediaError(error, 'after the phone uploaded it again');
  }
}

function mediaError(error: unknown, when?: string): NetworkMediaError {
  const message = `media host${when === undefined ? '' : ` ${when}`}: ${(error as Error).message}`;
  return new NetworkMediaError(message, goneFromHost(error) ? 'permanent' : 'transient');
}
