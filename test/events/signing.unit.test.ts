// Webhook signatures during a secret rotation: every secret in the overlap
// signs, in one header a Standard Webhooks receiver accepts with any of them;
// the replaced secret stops exactly when its overlap ends.
import { describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { signDelivery, signingSecrets } from '../../src/events/signing.js';
import { SECRET_OVERLAP_MS } from '../../src/events/service.js';

const NEW = `whsec_${Buffer.alloc(24, 1).toString('base64')}`;
const OLD = `whsec_${Buffer.alloc(24, 2).toString('base64')}`;
const OTHER = `whsec_${Buffer.alloc(24, 3).toString('base64')}`;

describe('signingSecrets', () => {
  const rotatedAt = Date.UTC(2026, 0, 1);
  const device = { secret: NEW, previous: OLD, previousUntil: rotatedAt + SECRET_OVERLAP_MS };

  it('signs with both for 24 h after a rotation, then with the new one alone', () => {
    expect(SECRET_OVERLAP_MS).toBe(24 * 60 * 60 * 1000);
    expect(signingSecrets(device, rotatedAt)).toEqual([NEW, OLD]);
    expect(signingSecrets(device, rotatedAt + SECRET_OVERLAP_MS - 1)).toEqual([NEW, OLD]);
    expect(signingSecrets(device, rotatedAt + SECRET_OVERLAP_MS)).toEqual([NEW]);
    expect(signingSecrets({ secret: NEW, previous: null, previousUntil: null }, rotatedAt)).toEqual([NEW]);
  });
});

describe('signDelivery', () => {
  it('sends one signature per secret; a receiver with any of them verifies, a stranger does not', () => {
    const at = Date.now();
    const payload = JSON.stringify({ id: 'evt_1', type: 'message.sent' });
    const headers = signDelivery([NEW, OLD], 'evt_1', payload, at);
    expect(headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/=]+ v1,[A-Za-z0-9+/=]+$/);
    for (const secret of [NEW, OLD])
      expect(new Webhook(secret).verify(payload, { ...headers })).toEqual(JSON.parse(payload));
    expect(() => new Webhook(OTHER).verify(payload, { ...headers })).toThrow(/signature/i);
  });
});

describe('signDelivery against the Standard Webhooks library', () => {
  it('computes the same signature for any text, non-ASCII and broken surrogates included', () => {
    const at = Date.UTC(2026, 10, 28, 12, 0, 0, 999);
    const bodies = ['{}', JSON.stringify({ text: 'héllo — 日本語 🎉' }), '{"text":"\ud83d"}', 'x'.repeat(70_000)];
    for (const secret of [NEW, OLD, Buffer.alloc(32, 9).toString('base64')]) {
      for (const body of bodies) {
        const expected = new Webhook(secret).sign('evt_2', new Date(at), body);
        expect(signDelivery([secret], 'evt_2', body, at)['webhook-signature']).toBe(expected);
      }
    }
    expect(signDelivery([NEW], 'evt_2', '{}', at)['webhook-timestamp']).toBe(String(Math.floor(at / 1000)));
  });
});
