/**
 * Sealing of stored network state: AES-256-GCM under GATEWAY_NETWORK_KEY
 * (docs/internals.md, WhatsApp and sandbox accounts), so a copy of the database alone does not hand over anyone's
 * WhatsApp session.
 *
 * Owns: the sealed format and its checks. A sealed value is
 *   [format 0x01][key id, 4 bytes][IV, 12 random bytes][ciphertext][GCM tag, 16 bytes]
 * The key id is the first 4 bytes of HMAC-SHA256(key, "gateway network key id"):
 * it says which configured key sealed the value (current or a previous one,
 * during a rotation) without revealing anything about the key. The additional
 * authenticated data is the header plus what the value is (session, kind, id),
 * so a value copied to another row, session or kind is refused like a
 * tampered one.
 * Must never: return bytes that failed authentication, reuse an IV, or name a
 * key or plaintext in an error.
 */
import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';
import type { NetworkKeys } from '../../config.js';

const FORMAT = 0x01;
const KEY_ID_BYTES = 4;
const IV_BYTES = 12;
const TAG_BYTES = 16;
const HEADER_BYTES = 1 + KEY_ID_BYTES;

/** A stored value that cannot be opened: tampered, truncated, misplaced, or sealed under a key not configured. */
export class UnreadableStateError extends Error {
  constructor(reason: string) {
    super(`stored network state cannot be read: ${reason}`);
    this.name = 'UnreadableStateError';
  }
}

/** Where a value belongs; bound into its seal. */
export interface SealedPlace {
  readonly session: string;
  readonly kind: string;
  readonly id: string;
}

function keyId(key: Buffer): Buffer {
  return createHmac('sha256', key).update('gateway network key id').digest().subarray(0, KEY_ID_BYTES);
}

function aad(header: Buffer, place: SealedPlace): Buffer {
  return Buffer.concat([header, Buffer.from(`${place.session}\u0000${place.kind}\u0000${place.id}`, 'utf8')]);
}

export interface Opened {
  readonly plain: Buffer;
  /** False when a previous key sealed it: the value should be sealed again under the current key. */
  readonly current: boolean;
}

export class Sealer {
  private readonly current: { id: Buffer; key: Buffer };
  private readonly byId = new Map<string, Buffer>();

  constructor(keys: NetworkKeys) {
    this.current = { id: keyId(keys.current), key: keys.current };
    for (const key of [...keys.previous].reverse()) this.byId.set(keyId(key).toString('hex'), key);
    this.byId.set(this.current.id.toString('hex'), keys.current);
  }

  /** Whether previous keys are configured: values sealed under them are to be sealed again. */
  get hasPrevious(): boolean {
    return this.byId.size > 1;
  }

  seal(plain: Uint8Array, place: SealedPlace): Buffer {
    const header = Buffer.concat([Buffer.of(FORMAT), this.current.id]);
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.current.key, iv, { authTagLength: TAG_BYTES });
    cipher.setAAD(aad(header, place));
    const body = Buffer.concat([cipher.update(plain), cipher.final()]);
    return Buffer.concat([header, iv, body, cipher.getAuthTag()]);
  }

  open(sealed: Uint8Array, place: SealedPlace): Opened {
    const blob = Buffer.from(sealed.buffer, sealed.byteOffset, sealed.byteLength);
    if (blob.length < HEADER_BYTES + IV_BYTES + TAG_BYTES) throw new UnreadableStateError('value too short');
    if (blob[0] !== FORMAT) throw new UnreadableStateError(`unknown format ${blob[0]}`);
    const header = blob.subarray(0, HEADER_BYTES);
    const id = header.subarray(1);
    const key = this.byId.get(id.toString('hex'));
    if (key === undefined) {
      throw new UnreadableStateError('sealed under a key that is neither GATEWAY_NETWORK_KEY nor a previous key');
    }
    const iv = blob.subarray(HEADER_BYTES, HEADER_BYTES + IV_BYTES);
    const tag = blob.subarray(blob.length - TAG_BYTES);
    const body = blob.subarray(HEADER_BYTES + IV_BYTES, blob.length - TAG_BYTES);
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
      decipher.setAAD(aad(header, place));
      decipher.setAuthTag(tag);
      const plain = Buffer.concat([decipher.update(body), decipher.final()]);
      return { plain, current: id.equals(this.current.id) };
    } catch {
      throw new UnreadableStateError('authentication failed (tampered, or not the row it was sealed for)');
    }
  }
}
