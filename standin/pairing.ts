/**
 * Linking a new device to a phone: by QR (pair-device refs, then pair-success) and by code
 * (link_code_companion_reg), ending with the 515 restart the client expects.
 *
 * Owns: the refs and codes in flight, the signed device identity a phone issues (its account signature over the
 * device's identity key, wrapped in the ADV HMAC made with the device's advSecret), and registering the new
 * companion with the keys it sent in its registration payload.
 * Must never: link a device the phone did not approve (a scan or a typed code through the control interface).
 */
import { randomBytes, randomInt } from 'node:crypto';
import {
  Curve,
  aesDecryptCTR,
  aesDecryptGCM,
  aesEncryptCTR,
  derivePairingCodeKey,
  getBinaryNodeChild,
  getBinaryNodeChildBuffer,
  hkdf,
  hmacSign,
  proto,
  type BinaryNode,
} from 'baileys';
import type { Stream } from './stream.js';
import { lidDeviceJid, pnDeviceJid, type Account, type Companion, type World } from './world.js';

const WA_ADV_ACCOUNT_SIG_PREFIX = Buffer.from([6, 0]);

export class ControlError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

interface CodeRequest {
  readonly stream: Stream;
  readonly wrapped: Buffer;
  readonly ref: string;
  /** Set once the phone typed a code: the primary's ephemeral key and who is waiting for the outcome. */
  typed?: {
    account: Account;
    ephemeral: { public: Buffer; private: Buffer };
    companionEphemeral: Buffer;
    settle: (error?: ControlError) => void;
  };
}

export class Pairing {
  private readonly refs = new Map<string, Stream>();
  /** Code requests by the number the device asked to link to. */
  private readonly codes = new Map<string, CodeRequest>();

  constructor(private readonly world: World) {}

  /** An unregistered client: send it refs to show as QR codes. */
  offerRefs(stream: Stream): void {
    const refs: BinaryNode[] = [];
    for (let i = 0; i < 6; i++) {
      const ref = `2@${randomBytes(24).toString('base64')}`;
      this.refs.set(ref, stream);
      refs.push({ tag: 'ref', attrs: {}, content: Buffer.from(ref) });
    }
    stream.send({
      tag: 'iq',
      attrs: { from: 's.whatsapp.net', type: 'set', id: stream.id(), xmlns: 'md' },
      content: [{ tag: 'pair-device', attrs: {}, content: refs }],
    });
  }

  /** The phone scanned a QR text: `[https://wa.me/settings/linked_devices#]ref,noiseKey,identityKey,advSecret[,platform]`. */
  scan(qr: string, phone: string): { jid: string } {
    const parts = qr.replace(/^https:\/\/wa\.me\/settings\/linked_devices#/, '').split(',');
    const [ref, noiseB64, identityB64, advB64] = parts;
    if (ref === undefined || noiseB64 === undefined || identityB64 === undefined || advB64 === undefined)
      throw new ControlError(400, 'not a WhatsApp pairing QR text');
    const stream = this.refs.get(ref);
    if (stream === undefined || !stream.isOpen) throw new ControlError(404, 'no device shows this QR code');
    if (stream.noiseKey === undefined || !stream.noiseKey.equals(Buffer.from(noiseB64, 'base64')))
      throw new ControlError(400, 'the QR code does not match the device that showed it');
    return this.link(
      stream,
      this.world.account(phone),
      Buffer.from(identityB64, 'base64'),
      Buffer.from(advB64, 'base64'),
    );
  }

  /** `link_code_companion_reg` from a device: its hello (keep it) or its finish (complete the link). */
  onLinkCode(stream: Stream, iq: BinaryNode, reg: BinaryNode): BinaryNode[] | undefined {
    const stage = reg.attrs.stage;
    const phone = (reg.attrs.jid ?? '').split('@')[0]?.split(':')[0] ?? '';
    if (stage === 'companion_hello') {
      const wrapped = getBinaryNodeChildBuffer(reg, 'link_code_pairing_wrapped_companion_ephemeral_pub');
      if (wrapped === undefined || phone === '') return undefined;
      const ref = randomBytes(16).toString('hex');
      this.codes.set(phone, { stream, wrapped: Buffer.from(wrapped), ref });
      return [
        {
          tag: 'link_code_companion_reg',
          attrs: {},
          content: [{ tag: 'link_code_pairing_ref', attrs: {}, content: Buffer.from(ref) }],
        },
      ];
    }
    if (stage === 'companion_finish') {
      const request = this.codes.get(phone);
      if (request?.typed === undefined || request.stream !== stream) return undefined;
      const { typed } = request;
      request.typed = undefined;
      try {
        const bundle = Buffer.from(getBinaryNodeChildBuffer(reg, 'link_code_pairing_wrapped_key_bundle') ?? []);
        const companionIdentity = Buffer.from(getBinaryNodeChildBuffer(reg, 'companion_identity_public') ?? []);
        const companionShared = Curve.sharedKey(typed.ephemeral.private, typed.companionEphemeral);
        const key = hkdf(companionShared, 32, {
          salt: bundle.subarray(0, 32),
          info: 'link_code_pairing_key_bundle_encryption_key',
        });
        // A wrong code gives the device a different shared key: its bundle then fails to decrypt here.
        const plain = aesDecryptGCM(bundle.subarray(44), Buffer.from(key), bundle.subarray(32, 44), Buffer.alloc(0));
        const random = plain.subarray(64, 96);
        const identityShared = Curve.sharedKey(
          typed.account.primary.creds.signedIdentityKey.private,
          companionIdentity,
        );
        const advSecret = hkdf(Buffer.concat([companionShared, identityShared, random]), 32, { info: 'adv_secret' });
        this.codes.delete(phone);
        setImmediate(() => {
          this.link(stream, typed.account, companionIdentity, Buffer.from(advSecret));
          typed.settle();
        });
      } catch {
        // The device computed its keys from a wrong code; it takes the next primary_hello, so the user may retry.
        typed.settle(new ControlError(400, 'the code does not match the one the device shows'));
      }
      return [];
    }
    return undefined;
  }

  /** The phone's user typed a code: resolves once the device finished the exchange (or refuses a wrong code). */
  async typeCode(code: string, phone: string): Promise<void> {
    const request = this.codes.get(phone);
    if (request === undefined || !request.stream.isOpen)
      throw new ControlError(404, `no device waits for a code for ${phone}`);
    const normalized = code.replace(/-/g, '').toUpperCase();
    if (!/^[0-9A-Z]{8}$/.test(normalized)) throw new ControlError(400, 'a pairing code is 8 letters and digits');
    const account = this.world.account(phone);
    const salt = request.wrapped.subarray(0, 32);
    const companionEphemeral = aesDecryptCTR(
      request.wrapped.subarray(48, 80),
      await derivePairingCodeKey(normalized, salt),
      request.wrapped.subarray(32, 48),
    );
    const pair = Curve.generateKeyPair();
    const ephemeral = { public: Buffer.from(pair.public), private: Buffer.from(pair.private) };
    const wrapSalt = randomBytes(32);
    const wrapIv = randomBytes(16);
    const wrappedPrimary = Buffer.concat([
      wrapSalt,
      wrapIv,
      aesEncryptCTR(ephemeral.public, await derivePairingCodeKey(normalized, wrapSalt), wrapIv),
    ]);
    const done = new Promise<void>((resolve, reject) => {
      request.typed = {
        account,
        ephemeral,
        companionEphemeral,
        settle: (error) => (error ? reject(error) : resolve()),
      };
    });
    request.stream.send({
      tag: 'notification',
      attrs: { from: 's.whatsapp.net', type: 'link_code_companion_reg', id: request.stream.id(), t: now() },
      content: [
        {
          tag: 'link_code_companion_reg',
          attrs: { stage: 'primary_hello' },
          content: [
            { tag: 'link_code_pairing_ref', attrs: {}, content: Buffer.from(request.ref) },
            { tag: 'primary_identity_pub', attrs: {}, content: account.primary.creds.signedIdentityKey.public },
            { tag: 'link_code_pairing_wrapped_primary_ephemeral_pub', attrs: {}, content: wrappedPrimary },
          ],
        },
      ],
    });
    const timeout = new Promise<never>((_, reject) => {
      const timer = setTimeout(
        () => reject(new ControlError(400, 'the device did not finish the code exchange')),
        10_000,
      );
      void done.finally(() => clearTimeout(timer)).catch(() => undefined);
    });
    await Promise.race([done, timeout]);
  }

  /** Issues the signed device identity and registers the companion; the client answers with pair-device-sign. */
  private link(stream: Stream, account: Account, companionIdentity: Buffer, advSecret: Buffer): { jid: string } {
    const registration = stream.registration?.devicePairingData;
    if (registration === undefined || registration === null || stream.noiseKey === undefined)
      throw new ControlError(400, 'the device is not waiting to be linked');
    for (const [ref, s] of this.refs) if (s === stream) this.refs.delete(ref);
    const device = account.nextDevice++;
    const phoneKeys = account.primary.creds.signedIdentityKey;
    const deviceDetails = proto.ADVDeviceIdentity.encode({
      rawId: randomInt(1, 2 ** 31),
      timestamp: Math.floor(Date.now() / 1000),
      keyIndex: device,
    }).finish();
    const accountSignature = Curve.sign(
      phoneKeys.private,
      Buffer.concat([WA_ADV_ACCOUNT_SIG_PREFIX, deviceDetails, companionIdentity]),
    );
    const details = proto.ADVSignedDeviceIdentity.encode({
      details: deviceDetails,
      accountSignatureKey: phoneKeys.public,
      accountSignature,
    }).finish();
    const hmac = hmacSign(Buffer.from(details), advSecret);
    const companion: Companion = {
      account,
      device,
      noiseKey: stream.noiseKey,
      registrationId: Buffer.from(registration.eRegid ?? []).readUInt32BE(0),
      identityKey: Buffer.from(registration.eIdent ?? []),
      signedPreKey: {
        keyId: Buffer.from(registration.eSkeyId ?? []).readUIntBE(0, 3),
        publicKey: Buffer.from(registration.eSkeyVal ?? []),
        signature: Buffer.from(registration.eSkeySig ?? []),
      },
      preKeys: new Map(),
      pending: [],
      unreceipted: new Map(),
      retrying: new Set(),
      removed: false,
      historySent: false,
    };
    account.companions.set(device, companion);
    stream.send({
      tag: 'iq',
      attrs: { from: 's.whatsapp.net', type: 'set', id: stream.id(), xmlns: 'md', t: now() },
      content: [
        {
          tag: 'pair-success',
          attrs: {},
          content: [
            {
              tag: 'device-identity',
              attrs: {},
              content: proto.ADVSignedDeviceIdentityHMAC.encode({ details, hmac }).finish(),
            },
            { tag: 'platform', attrs: { name: 'smba' } },
            { tag: 'device', attrs: { jid: pnDeviceJid(account, device), lid: lidDeviceJid(account, device) } },
          ],
        },
      ],
    });
    return { jid: pnDeviceJid(account, device) };
  }

  /** The device signed its identity: pairing is over, and the stream restarts (515) so it logs in. */
  onSigned(stream: Stream, node: BinaryNode): boolean {
    if (getBinaryNodeChild(node, 'pair-device-sign') === undefined) return false;
    setTimeout(() => stream.end(515), 20);
    return true;
  }

  forget(stream: Stream): void {
    for (const [ref, s] of this.refs) if (s === stream) this.refs.delete(ref);
    for (const [phone, request] of this.codes) if (request.stream === stream) this.codes.delete(phone);
  }
}

export function now(): string {
  return String(Math.floor(Date.now() / 1000));
}
