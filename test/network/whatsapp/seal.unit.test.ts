// docs/internals.md, WhatsApp and sandbox accounts: stored network state is sealed with AES-256-GCM under
// GATEWAY_NETWORK_KEY; a value that was tampered with, moved to another row or
// sealed under an unknown key is refused, never returned.
import { describe, expect, it } from 'vitest';
import { Sealer, UnreadableStateError } from '../../../src/network/whatsapp/seal.js';

const K1 = Buffer.alloc(32, 0x11);
const K2 = Buffer.alloc(32, 0x22);
const PLACE = { session: 'wa1.s1', kind: 'session', id: '123.0' };
const PLAIN = Buffer.from('{"ratchet":"state"}');

function refused(run: () => unknown): UnreadableStateError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(UnreadableStateError);
    return error as UnreadableStateError;
  }
  throw new Error('the sealed value was accepted');
}

describe('Sealer', () => {
  const sealer = new Sealer({ current: K1, previous: [] });

  it('opens what it sealed, and says it is under the current key', () => {
    const sealed = sealer.seal(PLAIN, PLACE);
    expect(sealer.open(sealed, PLACE)).toEqual({ plain: PLAIN, current: true });
  });

  it('uses a fresh IV every time: the same value never seals to the same bytes', () => {
    const a = sealer.seal(PLAIN, PLACE);
    const b = sealer.seal(PLAIN, PLACE);
    expect(a.equals(b)).toBe(false);
    expect(a.subarray(5, 17).equals(b.subarray(5, 17))).toBe(false);
    // Format byte, key id, IV, body, tag: the plaintext length plus 33 bytes.
    expect(a.length).toBe(PLAIN.length + 1 + 4 + 12 + 16);
    expect(a[0]).toBe(1);
    expect(a.includes(PLAIN)).toBe(false);
  });

  it.each([
    ['the format byte', 0],
    ['the key id', 2],
    ['the IV', 8],
    ['the ciphertext', 20],
    ['the tag', -1],
  ])('refuses a value with %s changed', (_what, index) => {
    const sealed = sealer.seal(PLAIN, PLACE);
    const at = index < 0 ? sealed.length + index : index;
    sealed[at] = sealed[at]! ^ 0x01;
    refused(() => sealer.open(sealed, PLACE));
  });

  it.each([
    ['another session', { ...PLACE, session: 'wa1.s2' }],
    ['another kind', { ...PLACE, kind: 'pre-key' }],
    ['another id', { ...PLACE, id: '124.0' }],
  ])('refuses a value moved to %s', (_what, place) => {
    const error = refused(() => sealer.open(sealer.seal(PLAIN, PLACE), place));
    expect(error.message).toBe(
      'stored network state cannot be read: authentication failed (tampered, or not the row it was sealed for)',
    );
  });

  it('refuses truncated values and unknown formats', () => {
    const sealed = sealer.seal(PLAIN, PLACE);
    refused(() => sealer.open(sealed.subarray(0, 32), PLACE));
    refused(() => sealer.open(sealed.subarray(0, sealed.length - 1), PLACE));
    refused(() => sealer.open(Buffer.alloc(0), PLACE));
  });

  it('refuses a value sealed under a key that is not configured, and says so without naming it', () => {
    const other = new Sealer({ current: K2, previous: [] });
    const error = refused(() => other.open(sealer.seal(PLAIN, PLACE), PLACE));
    expect(error.message).toBe(
      'stored network state cannot be read: sealed under a key that is neither GATEWAY_NETWORK_KEY nor a previous key',
    );
    expect(error.message).not.toContain(K1.toString('base64'));
  });

  it('after a rotation, opens values of the previous key (marked not current) and seals under the new one', () => {
    const rotated = new Sealer({ current: K2, previous: [K1] });
    const old = sealer.seal(PLAIN, PLACE);
    expect(rotated.open(old, PLACE)).toEqual({ plain: PLAIN, current: false });
    const fresh = rotated.seal(PLAIN, PLACE);
    expect(rotated.open(fresh, PLACE)).toEqual({ plain: PLAIN, current: true });
    // The new key's values are not readable with the old key alone.
    refused(() => sealer.open(fresh, PLACE));
  });
});
