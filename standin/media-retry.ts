/**
 * Media re-upload requests (WhatsApp's "media retry"): a linked device whose download of a phone's media found the
 * media host's copy gone sends a `receipt` of type `server-error` for the message, with the request encrypted under
 * a key derived from the media key (`encrypt`: `enc_p`, `enc_iv`) and the message named (`rmr`). The phone, which
 * still has the file, uploads it again and answers with a `notification` of type `mediaretry` carrying, encrypted
 * the same way, the new copy's direct path; a phone that no longer has it answers with an `error` code.
 *
 * Owns: expiring a phone message's media on the host at the control's request (the phone keeps its copy), and
 * answering those requests as the phone and the server do.
 * Must never: answer for a message no phone sent, or name a new copy it did not put on the media host.
 */
import { randomBytes } from 'node:crypto';
import { aesDecryptGCM, aesEncryptGCM, getBinaryNodeChild, hkdf, proto, type BinaryNode } from 'baileys';
import { mediaKind } from './media.js';
import { now } from './pairing.js';
import type { Stream } from './stream.js';
import type { World } from './world.js';

export interface MediaRetryContext {
  readonly world: World;
  /** The media host's encrypted blobs by direct path. */
  readonly media: Map<string, Buffer>;
  /** The phones' own copies of media the host no longer has, by the direct path it had. */
  readonly phoneCopies: Map<string, Buffer>;
  log(message: string): void;
}

const RESULT = proto.MediaRetryNotification.ResultType;

const retryKey = (mediaKey: Uint8Array): Uint8Array =>
  hkdf(mediaKey, 32, { info: 'WhatsApp Media Retry Notification' });

/**
 * The media of a phone's message as the host's copy expired: `kept` leaves the phone its copy (a re-upload
 * succeeds), `deleted` means the phone no longer has it either. False for a message without media.
 */
export function expireOnHost(ctx: MediaRetryContext, message: proto.IMessage, phone: 'kept' | 'deleted'): boolean {
  const path = mediaKind(message)?.media.directPath;
  if (typeof path !== 'string') return false;
  const blob = ctx.media.get(path);
  ctx.media.delete(path);
  if (phone === 'kept' && blob !== undefined) ctx.phoneCopies.set(path, blob);
  return true;
}

/** The message a phone sent under this id, as it sent it. */
function phoneMessage(world: World, id: string): proto.IMessage | undefined {
  for (const [key, entry] of world.resendable) if (key.endsWith(`/${id}`)) return entry.message;
  return undefined;
}

/** A linked device's re-upload request: the phone uploads its copy again and the device is told where. */
export function mediaRetryFromCompanion(ctx: MediaRetryContext, node: BinaryNode, stream: Stream): void {
  const id = node.attrs.id ?? '';
  const rmr = getBinaryNodeChild(node, 'rmr');
  const answer = (content: BinaryNode[]) =>
    stream.send({
      tag: 'notification',
      attrs: { from: node.attrs.to ?? 's.whatsapp.net', type: 'mediaretry', id, t: now() },
      content: [...content, { tag: 'rmr', attrs: { ...(rmr?.attrs ?? {}) } }],
    });
  const refuse = (code: number, why: string) => {
    ctx.log(`media retry ${id}: ${why}`);
    answer([{ tag: 'error', attrs: { code: String(code) } }]);
  };
  const message = phoneMessage(ctx.world, id);
  const media = message === undefined ? undefined : mediaKind(message)?.media;
  if (media?.mediaKey === undefined || media.mediaKey === null || typeof media.directPath !== 'string') {
    return refuse(RESULT.NOT_FOUND, 'no phone sent media under this id');
  }
  const key = retryKey(media.mediaKey);
  const encrypted = getBinaryNodeChild(node, 'encrypt');
  const sealed = getBinaryNodeChild(encrypted, 'enc_p')?.content;
  const iv = getBinaryNodeChild(encrypted, 'enc_iv')?.content;
  try {
    if (!(sealed instanceof Uint8Array) || !(iv instanceof Uint8Array)) throw new Error('no encrypted request');
    const request = proto.ServerErrorReceipt.decode(aesDecryptGCM(sealed, key, iv, Buffer.from(id)));
    if (request.stanzaId !== id) throw new Error('the request names another message');
  } catch (error) {
    return refuse(RESULT.DECRYPTION_ERROR, `unreadable request (${(error as Error).message})`);
  }
  const copy = ctx.phoneCopies.get(media.directPath) ?? ctx.media.get(media.directPath);
  if (copy === undefined) return refuse(RESULT.NOT_FOUND, 'the phone no longer has the media');
  const directPath = `/v/t62.7118-24/${randomBytes(12).toString('hex')}.enc`;
  ctx.media.set(directPath, copy);
  const notice = proto.MediaRetryNotification.encode({ stanzaId: id, directPath, result: RESULT.SUCCESS }).finish();
  const answerIv = randomBytes(12);
  ctx.log(`media retry ${id}: uploaded again at ${directPath}`);
  answer([
    {
      tag: 'encrypt',
      attrs: {},
      content: [
        { tag: 'enc_p', attrs: {}, content: aesEncryptGCM(notice, key, answerIv, Buffer.from(id)) },
        { tag: 'enc_iv', attrs: {}, content: answerIv },
      ],
    },
  ]);
}
