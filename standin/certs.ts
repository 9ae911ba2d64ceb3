/**
 * The stand-in's two kinds of certificate.
 *
 * Owns: the Noise certificate chain (a test root, an intermediate signed by it, and a leaf for the server's static
 * key), built from the library's own protobufs and Curve25519 signatures; and the TLS certificate of the media
 * host (a self-signed certificate for 127.0.0.1 that is its own CA, written to a PEM file the gateway process trusts
 * through NODE_EXTRA_CA_CERTS).
 * Must never: reuse WhatsApp's real root, or be trusted by anything but a test process (keys are made per start).
 */
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Curve, WA_CERT_DETAILS, proto } from 'baileys';
import forge from 'node-forge';

export interface KeyPair {
  readonly public: Buffer;
  readonly private: Buffer;
}

function keyPair(): KeyPair {
  const pair = Curve.generateKeyPair();
  return { public: Buffer.from(pair.public), private: Buffer.from(pair.private) };
}

export interface NoiseIdentity {
  /** The root whose public key a client puts into `WA_CERT_DETAILS.PUBLIC_KEY`. */
  readonly root: KeyPair;
  /** The server's static Noise key, the one the leaf certifies. */
  readonly static: KeyPair;
  /** proto.CertChain, encoded: what the server sends inside its hello. */
  readonly chain: Uint8Array;
}

function certificate(details: proto.CertChain.NoiseCertificate.IDetails, signer: KeyPair) {
  const encoded = proto.CertChain.NoiseCertificate.Details.encode(details).finish();
  return { details: encoded, signature: Buffer.from(Curve.sign(signer.private, encoded)) };
}

export function makeNoiseIdentity(): NoiseIdentity {
  const root = keyPair();
  const intermediate = keyPair();
  const serverStatic = keyPair();
  const now = Math.floor(Date.now() / 1000);
  // The client checks the intermediate against its root, the leaf against the intermediate's key, and that the
  // intermediate names the issuer serial it expects.
  const chain = proto.CertChain.encode({
    intermediate: certificate(
      {
        serial: 1,
        issuerSerial: WA_CERT_DETAILS.SERIAL,
        key: intermediate.public,
        notBefore: now,
        notAfter: now + 86_400,
      },
      root,
    ),
    leaf: certificate(
      { serial: 2, issuerSerial: 1, key: serverStatic.public, notBefore: now, notAfter: now + 86_400 },
      intermediate,
    ),
  }).finish();
  return { root, static: serverStatic, chain };
}

export interface TlsIdentity {
  readonly key: string;
  readonly cert: string;
  /** Where the certificate is written, for NODE_EXTRA_CA_CERTS. */
  readonly caPath: string;
}

/** A self-signed certificate for 127.0.0.1 and localhost, marked as a CA so it can be trusted as its own root. */
export function makeTlsIdentity(): TlsIdentity {
  // Node makes the key (forge's pure-JS RSA generation takes seconds); forge only writes the X.509 certificate.
  const pair = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const keyPem = pair.privateKey.export({ type: 'pkcs1', format: 'pem' }).toString();
  const privateKey = forge.pki.privateKeyFromPem(keyPem);
  const cert = forge.pki.createCertificate();
  cert.publicKey = forge.pki.publicKeyFromPem(pair.publicKey.export({ type: 'spki', format: 'pem' }).toString());
  cert.serialNumber = '01' + forge.util.bytesToHex(forge.random.getBytesSync(8));
  cert.validity.notBefore = new Date(Date.now() - 60_000);
  cert.validity.notAfter = new Date(Date.now() + 7 * 86_400_000);
  const name = [{ name: 'commonName', value: 'WhatsApp stand-in test CA' }];
  cert.setSubject(name);
  cert.setIssuer(name);
  cert.setExtensions([
    { name: 'basicConstraints', cA: true },
    { name: 'keyUsage', keyCertSign: true, digitalSignature: true, keyEncipherment: true },
    { name: 'extKeyUsage', serverAuth: true },
    {
      name: 'subjectAltName',
      altNames: [
        { type: 7, ip: '127.0.0.1' },
        { type: 2, value: 'localhost' },
      ],
    },
  ]);
  cert.sign(privateKey, forge.md.sha256.create());
  const pem = forge.pki.certificateToPem(cert);
  const dir = mkdtempSync(join(tmpdir(), 'standin-ca-'));
  const caPath = join(dir, 'ca.pem');
  writeFileSync(caPath, pem);
  writeFileSync(join(dir, 'key.pem'), keyPem, { mode: 0o600 });
  return { key: keyPem, cert: pem, caPath };
}

/** Removes the folder makeTlsIdentity wrote the identity's files into (its certificate and key). */
export async function removeTlsIdentity(identity: TlsIdentity): Promise<void> {
  await rm(dirname(identity.caPath), { recursive: true, force: true });
}

/**
 * An identity made earlier by makeTlsIdentity, from the CA file's folder: for a process that must trust the CA
 * from its start (NODE_EXTRA_CA_CERTS is read once, when Node starts) and also serve with it.
 */
export function loadTlsIdentity(caPath: string): TlsIdentity {
  return { cert: readFileSync(caPath, 'utf8'), key: readFileSync(join(dirname(caPath), 'key.pem'), 'utf8'), caPath };
}
