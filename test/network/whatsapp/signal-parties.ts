// Two parties of the real Signal library Baileys uses, for the key-store tests (auth-state.test.ts,
// closed-socket-keys.test.ts): how one starts a session with the other.
import { Curve, generateSignalPubKey, type SignalRepositoryWithLIDStore } from 'baileys';
import type { SessionAuth } from '../../../src/network/whatsapp/auth-state.js';

export interface SignalParty {
  readonly auth: SessionAuth;
  readonly repo: SignalRepositoryWithLIDStore;
}

/** `bob` publishes a one-time pre-key (id 1); `alice` starts a session with `bobJid` from his bundle. */
export async function introduce(alice: SignalParty, bob: SignalParty, bobJid: string): Promise<void> {
  const preKey = Curve.generateKeyPair();
  await bob.auth.state.keys.set({ 'pre-key': { '1': preKey } });
  const { creds } = bob.auth.state;
  await alice.repo.injectE2ESession({
    jid: bobJid,
    session: {
      registrationId: creds.registrationId,
      identityKey: generateSignalPubKey(creds.signedIdentityKey.public),
      signedPreKey: {
        keyId: creds.signedPreKey.keyId,
        publicKey: generateSignalPubKey(creds.signedPreKey.keyPair.public),
        signature: creds.signedPreKey.signature,
      },
      preKey: { keyId: 1, publicKey: generateSignalPubKey(preKey.public) },
    },
  });
}
