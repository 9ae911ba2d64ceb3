// Issue 23: the 812 pre-keys of a device's first login are made off the event loop, before the socket after
// pairing opens, so the library finds them made and uploads them instead of making them itself (812
// generateKeyPairSync calls in a row on the event loop, seconds per pairing on a loaded host).
import { createRequire } from 'node:module';
import { INITIAL_PREKEY_COUNT, getNextPreKeysNode, type BinaryNode, type KeyPair } from 'baileys';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { noStoreAvailable } from '../../helpers/gateway.js';
import { WhatsAppHarness } from './harness.js';

const curve = createRequire(import.meta.url)('libsignal/src/curve.js') as {
  calculateAgreement(pub: Buffer, priv: Buffer): Buffer;
};
const withType = (key: Uint8Array) => Buffer.concat([Buffer.from([5]), key]);

describe.skipIf(noStoreAvailable)('the first pre-keys of a paired device', () => {
  let h: WhatsAppHarness;
  beforeEach(async () => (h = await WhatsAppHarness.open({ preKeysAtPairing: INITIAL_PREKEY_COUNT })));
  afterEach(async () => h.close());

  it('are made and stored before the socket after pairing opens, and the library uploads those', async () => {
    const { socket } = await h.pair();
    const { creds, keys } = socket.auth;
    // What the library reads at its first login: 812 made but not yet uploaded.
    expect(creds.firstUnuploadedPreKeyId).toBe(1);
    expect(creds.nextPreKeyId).toBe(1 + INITIAL_PREKEY_COUNT);
    const ids = Array.from({ length: INITIAL_PREKEY_COUNT }, (_, i) => String(i + 1));
    const stored = (await keys.get('pre-key', ids)) as Record<string, KeyPair>;
    expect(Object.keys(stored)).toHaveLength(INITIAL_PREKEY_COUNT);
    // Real X25519 pairs in the library's form: both sides of two pairs agree on the same secret.
    const a = stored['1']!;
    const b = stored[String(INITIAL_PREKEY_COUNT)]!;
    expect(a.public).toHaveLength(32);
    expect(
      curve
        .calculateAgreement(withType(b.public), Buffer.from(a.private))
        .equals(curve.calculateAgreement(withType(a.public), Buffer.from(b.private))),
    ).toBe(true);
    // The library's own upload step: it makes none and sends the stored ones.
    const { update, node } = await getNextPreKeysNode({ creds, keys }, INITIAL_PREKEY_COUNT);
    expect(update).toEqual({
      nextPreKeyId: 1 + INITIAL_PREKEY_COUNT,
      firstUnuploadedPreKeyId: 1 + INITIAL_PREKEY_COUNT,
    });
    const list = (node.content as BinaryNode[]).find((n) => n.tag === 'list')!.content as BinaryNode[];
    expect(list).toHaveLength(INITIAL_PREKEY_COUNT);
    const firstSent = (list[0]!.content as BinaryNode[]).find((n) => n.tag === 'value')!.content as Uint8Array;
    expect(Buffer.from(firstSent).equals(Buffer.from(a.public))).toBe(true);
  });

  it('are made once: a session whose keys were uploaded gets none made again', async () => {
    const { socket, session, connection } = await h.pair();
    // As the library records its upload.
    socket.auth.creds.firstUnuploadedPreKeyId = socket.auth.creds.nextPreKeyId;
    socket.ev.emit('creds.update', { firstUnuploadedPreKeyId: socket.auth.creds.firstUnuploadedPreKeyId });
    await connection.settled?.();
    connection.close();
    const again = await h.reconnect(session);
    expect(again.socket.auth.creds.nextPreKeyId).toBe(1 + INITIAL_PREKEY_COUNT);
    expect(again.socket.auth.creds.firstUnuploadedPreKeyId).toBe(1 + INITIAL_PREKEY_COUNT);
  });
});
