/**
 * Media: the HTTPS host linked devices upload to and download from, and the media encryption the phones use.
 *
 * Owns: the encrypted blobs by direct path (in memory), the upload answer (`url`, `direct_path`), and encrypting
 * and decrypting media the way the library does (keys from HKDF of the media key with a per-type info string,
 * AES-256-CBC, a 10-byte HMAC-SHA256 suffix, the plaintext's and the ciphertext's SHA-256).
 * Must never: serve anything but the blobs it stored, or accept an upload whose bytes do not match its hash token.
 */
import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, type Server } from 'node:https';
import type { proto } from 'baileys';
import { getMediaKeys, type MediaType } from 'baileys';
import type { TlsIdentity } from './certs.js';
import type { Faults } from './world.js';

export type MediaKind = 'image' | 'video' | 'audio' | 'document' | 'sticker';

type AnyMedia = proto.Message.IImageMessage &
  proto.Message.IVideoMessage &
  proto.Message.IAudioMessage &
  proto.Message.IDocumentMessage &
  proto.Message.IStickerMessage;

export function mediaKind(message: proto.IMessage): { kind: MediaKind; media: AnyMedia } | undefined {
  const inner = message.documentWithCaptionMessage?.message ?? message;
  const pairs: [MediaKind, unknown][] = [
    ['image', inner.imageMessage],
    ['video', inner.videoMessage],
    ['audio', inner.audioMessage],
    ['document', inner.documentMessage],
    ['sticker', inner.stickerMessage],
  ];
  for (const [kind, media] of pairs) if (media) return { kind, media: media as AnyMedia };
  return undefined;
}

/** Decrypts a media message's bytes from the store; undefined when missing or when a check fails. */
export async function decryptMedia(
  store: Map<string, Buffer>,
  kind: MediaKind,
  media: AnyMedia,
): Promise<Buffer | undefined> {
  const path = media.directPath ?? (media.url ? new URL(media.url).pathname : undefined);
  const blob = path === undefined ? undefined : store.get(path.split('?')[0]!);
  if (blob === undefined || !media.mediaKey) return undefined;
  return decryptBlob(
    blob,
    kind,
    Buffer.from(media.mediaKey),
    media.fileSha256 ? Buffer.from(media.fileSha256) : undefined,
  );
}

async function keysFor(kind: MediaKind, mediaKey: Buffer) {
  const { iv, cipherKey, macKey } = await getMediaKeys(mediaKey, kind as MediaType);
  return { iv: Buffer.from(iv), cipherKey: Buffer.from(cipherKey), macKey: Buffer.from(macKey ?? []) };
}

export async function decryptBlob(
  blob: Buffer,
  kind: MediaKind,
  mediaKey: Buffer,
  fileSha256?: Buffer,
): Promise<Buffer | undefined> {
  const { iv, cipherKey, macKey } = await keysFor(kind, mediaKey);
  const body = blob.subarray(0, blob.length - 10);
  const mac = createHmac('sha256', macKey).update(iv).update(body).digest().subarray(0, 10);
  if (!timingSafeEqual(mac, blob.subarray(blob.length - 10))) return undefined;
  const decipher = createDecipheriv('aes-256-cbc', cipherKey, iv);
  const plain = Buffer.concat([decipher.update(body), decipher.final()]);
  if (fileSha256 !== undefined && !createHash('sha256').update(plain).digest().equals(fileSha256)) return undefined;
  return plain;
}

export async function encryptBlob(plain: Buffer, kind: MediaKind) {
  const mediaKey = randomBytes(32);
  const { iv, cipherKey, macKey } = await keysFor(kind, mediaKey);
  const cipher = createCipheriv('aes-256-cbc', cipherKey, iv);
  const body = Buffer.concat([cipher.update(plain), cipher.final()]);
  const mac = createHmac('sha256', macKey).update(iv).update(body).digest().subarray(0, 10);
  const blob = Buffer.concat([body, mac]);
  return {
    blob,
    mediaKey,
    fileSha256: createHash('sha256').update(plain).digest(),
    fileEncSha256: createHash('sha256').update(blob).digest(),
  };
}

/** The HTTPS media host: POST /mms/<type>/<token> stores, GET <direct path> serves. */
export function startMediaHost(
  tls: TlsIdentity,
  store: Map<string, Buffer>,
  faults: Faults,
  host: string,
  stats: { uploads: number } = { uploads: 0 },
): Promise<{ server: Server; port: number }> {
  const server = createServer({ key: tls.key, cert: tls.cert }, (req, res) => {
    const url = new URL(req.url ?? '/', 'https://standin');
    if (req.method === 'POST' && url.pathname.startsWith('/mms/')) {
      stats.uploads++;
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks);
        const token = url.searchParams.get('token') ?? '';
        const hash = createHash('sha256').update(body).digest('base64url');
        if (token.replace(/=+$/, '') !== hash) {
          res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'hash mismatch' }));
          return;
        }
        const directPath = `/v/t62.7118-24/${randomBytes(12).toString('hex')}.enc`;
        store.set(directPath, body);
        const answer = JSON.stringify({ url: `https://${host}:${port()}${directPath}`, direct_path: directPath });
        setTimeout(
          () => res.writeHead(200, { 'content-type': 'application/json' }).end(answer),
          faults.slow_upload_ms ?? 0,
        );
      });
      return;
    }
    if (req.method === 'GET') {
      const blob = store.get(url.pathname);
      if (blob !== undefined) {
        res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': blob.length }).end(blob);
        return;
      }
    }
    res.writeHead(404).end();
  });
  const port = () => (server.address() as { port: number }).port;
  return new Promise((resolve) => server.listen(0, host, () => resolve({ server, port: port() })));
}
