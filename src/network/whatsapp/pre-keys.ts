/**
 * The first batch of Signal pre-keys of a newly paired device, made off the event loop.
 *
 * Owns: making the pre-keys the library uploads at a device's first login (INITIAL_PREKEY_COUNT, 812) with
 * Node's asynchronous key generation (libuv's thread pool), storing them through the session's key store and
 * advancing `creds.nextPreKeyId`, before the first socket after pairing opens. The library then finds them
 * made but not yet uploaded (`nextPreKeyId - firstUnuploadedPreKeyId`), reads them from the store and uploads
 * them instead of making them itself, one `generateKeyPairSync` after another on the event loop: 812 of them
 * held the gateway's event loop for seconds per pairing on a loaded host (bench/README.md, the stand-in).
 * Must never: touch keys the library already made or uploaded, or advance the counter before the keys are
 * stored (a login that read the counter would then upload keys that do not exist).
 */
import { generateKeyPair } from 'node:crypto';
import { INITIAL_PREKEY_COUNT, type AuthenticationState, type KeyPair } from 'baileys';

/** DER prefixes of an X25519 key (SPKI public, PKCS#8 private): the raw 32 bytes follow them. */
const PUBLIC_DER_PREFIX = 12;
const PRIVATE_DER_PREFIX = 16;

/** Keys asked of the thread pool at once: it is shared with file, DNS and zlib work. */
const BATCH = 32;

function x25519(): Promise<KeyPair> {
  return new Promise((resolve, reject) => {
    generateKeyPair(
      'x25519',
      { publicKeyEncoding: { format: 'der', type: 'spki' }, privateKeyEncoding: { format: 'der', type: 'pkcs8' } },
      (error, publicDer, privateDer) => {
        if (error !== null) return reject(error);
        // The library's own form: the raw keys, the public one without Signal's type byte.
        resolve({
          public: Buffer.from(publicDer.subarray(PUBLIC_DER_PREFIX, PUBLIC_DER_PREFIX + 32)),
          private: Buffer.from(privateDer.subarray(PRIVATE_DER_PREFIX, PRIVATE_DER_PREFIX + 32)),
        });
      },
    );
  });
}

/**
 * Makes and stores the pre-keys the first login will upload, unless enough are made already. Returns how many
 * it made; the caller saves the credentials when it is more than 0.
 */
export async function prepareInitialPreKeys(
  state: AuthenticationState,
  count: number = INITIAL_PREKEY_COUNT,
): Promise<number> {
  const { creds, keys } = state;
  // Keys were uploaded before: not a first login, and the library tops them up itself, a few at a time.
  if (creds.firstUnuploadedPreKeyId > 1) return 0;
  const first = creds.nextPreKeyId;
  const missing = count - (first - creds.firstUnuploadedPreKeyId);
  if (missing <= 0) return 0;
  const made: { [id: string]: KeyPair } = {};
  for (let done = 0; done < missing; done += BATCH) {
    const pairs = await Promise.all(Array.from({ length: Math.min(BATCH, missing - done) }, x25519));
    pairs.forEach((pair, i) => (made[String(first + done + i)] = pair));
  }
  await keys.set({ 'pre-key': made });
  // Only once stored: the library uploads the range [firstUnuploadedPreKeyId, nextPreKeyId) from the store.
  creds.nextPreKeyId = first + missing;
  return missing;
}
