/**
 * The server's half of WhatsApp Web's Noise XX handshake, and the framed, encrypted transport that follows.
 *
 * Owns: the handshake state (hash, salt, key, counter) mirrored step for step from the client's handler in
 * `baileys/lib/Utils/noise-handler.js`, and the 3-byte length framing of every frame.
 * Must never: accept a frame before the handshake has produced transport keys, or decode a stanza itself (that is
 * the library's WABinary codec, in stream.ts).
 */
import { Curve, NOISE_MODE, NOISE_WA_HEADER, aesDecryptGCM, aesEncryptGCM, hkdf, proto, sha256 } from 'baileys';
import type { NoiseIdentity } from './certs.js';

const EMPTY = Buffer.alloc(0);

function iv(counter: number): Buffer {
  const out = Buffer.alloc(12);
  out.writeUInt32BE(counter, 8);
  return out;
}

/** Splits a byte stream into the protocol's frames (a 3-byte big-endian length, then the frame). */
export class FrameReader {
  private buffered: Buffer = Buffer.alloc(0);
  private introSeen = false;

  /** Appends bytes and returns each complete frame; the client's first bytes carry the `WA` intro header. */
  push(data: Buffer): Buffer[] {
    this.buffered = this.buffered.length === 0 ? data : Buffer.concat([this.buffered, data]);
    if (!this.introSeen) {
      if (this.buffered.length < NOISE_WA_HEADER.length) return [];
      // Routing info ("ED" header) is only sent over wss with stored routing info, which this server never issues.
      if (!this.buffered.subarray(0, NOISE_WA_HEADER.length).equals(NOISE_WA_HEADER))
        throw new Error('the client did not open with the WA header');
      this.buffered = this.buffered.subarray(NOISE_WA_HEADER.length);
      this.introSeen = true;
    }
    const frames: Buffer[] = [];
    while (this.buffered.length >= 3) {
      const size = (this.buffered[0]! << 16) | (this.buffered[1]! << 8) | this.buffered[2]!;
      if (this.buffered.length < size + 3) break;
      frames.push(this.buffered.subarray(3, size + 3));
      this.buffered = this.buffered.subarray(size + 3);
    }
    return frames;
  }
}

export function frame(data: Uint8Array): Buffer {
  const out = Buffer.alloc(3 + data.length);
  out[0] = (data.length >>> 16) & 0xff;
  out[1] = (data.length >>> 8) & 0xff;
  out[2] = data.length & 0xff;
  out.set(data, 3);
  return out;
}

export interface Transport {
  encrypt(plaintext: Uint8Array): Buffer;
  decrypt(ciphertext: Uint8Array): Buffer;
}

/** One handshake, from the client's hello to the transport keys. */
export class NoiseResponder {
  private hash: Buffer;
  private salt: Buffer;
  private key: Buffer;
  private counter = 0;
  private readonly ephemeral = Curve.generateKeyPair();
  private clientEphemeral: Buffer = EMPTY;

  constructor(private readonly identity: NoiseIdentity) {
    const mode = Buffer.from(NOISE_MODE);
    this.hash = mode.length === 32 ? mode : sha256(mode);
    this.salt = this.hash;
    this.key = this.hash;
    this.authenticate(NOISE_WA_HEADER);
  }

  private authenticate(data: Uint8Array): void {
    this.hash = sha256(Buffer.concat([this.hash, data]));
  }

  private mix(shared: Uint8Array): void {
    const out = hkdf(Buffer.from(shared), 64, { salt: this.salt, info: '' });
    this.salt = Buffer.from(out.subarray(0, 32));
    this.key = Buffer.from(out.subarray(32));
    this.counter = 0;
  }

  private encrypt(plaintext: Uint8Array): Buffer {
    const out = aesEncryptGCM(plaintext, this.key, iv(this.counter++), this.hash);
    this.authenticate(out);
    return out;
  }

  private decrypt(ciphertext: Uint8Array): Buffer {
    const out = aesDecryptGCM(ciphertext, this.key, iv(this.counter++), this.hash);
    this.authenticate(ciphertext);
    return out;
  }

  /** Takes the client hello, answers with the server hello (ephemeral, encrypted static key, certificate chain). */
  serverHello(clientFrame: Uint8Array): Uint8Array {
    const hello = proto.HandshakeMessage.decode(clientFrame).clientHello;
    if (!hello?.ephemeral || hello.ephemeral.length !== 32) throw new Error('client hello without an ephemeral key');
    this.clientEphemeral = Buffer.from(hello.ephemeral);
    this.authenticate(this.clientEphemeral);
    this.authenticate(this.ephemeral.public);
    this.mix(Curve.sharedKey(this.ephemeral.private, this.clientEphemeral));
    const staticEnc = this.encrypt(this.identity.static.public);
    this.mix(Curve.sharedKey(this.identity.static.private, this.clientEphemeral));
    const payload = this.encrypt(this.identity.chain);
    return proto.HandshakeMessage.encode({
      serverHello: { ephemeral: this.ephemeral.public, static: staticEnc, payload },
    }).finish();
  }

  /** Takes the client finish: returns the client's static (noise) key, its payload, and the transport. */
  clientFinish(clientFrame: Uint8Array): { noiseKey: Buffer; payload: proto.ClientPayload; transport: Transport } {
    const finish = proto.HandshakeMessage.decode(clientFrame).clientFinish;
    if (!finish?.static || !finish.payload) throw new Error('client finish without static key or payload');
    const noiseKey = this.decrypt(finish.static);
    this.mix(Curve.sharedKey(this.ephemeral.private, noiseKey));
    const payload = proto.ClientPayload.decode(this.decrypt(finish.payload));
    const out = hkdf(EMPTY, 64, { salt: this.salt, info: '' });
    // The client encrypts with the first half and decrypts with the second; the server the other way round.
    const clientWrite = Buffer.from(out.subarray(0, 32));
    const clientRead = Buffer.from(out.subarray(32));
    let readCounter = 0;
    let writeCounter = 0;
    const transport: Transport = {
      encrypt: (plaintext) => aesEncryptGCM(plaintext, clientRead, iv(writeCounter++), EMPTY),
      decrypt: (ciphertext) => aesDecryptGCM(ciphertext, clientWrite, iv(readCounter++), EMPTY),
    };
    return { noiseKey, payload, transport };
  }
}
