/**
 * Standard Webhooks signatures (docs/internals.md, Webhooks): the headers that let a receiver
 * check a delivery came from us and was not changed or replayed later.
 *
 * Owns: the three `webhook-*` headers of one attempt. The signature covers
 * `id.timestamp.body` with the device's secret, where body is the exact stored
 * payload, sent byte for byte; the timestamp is the attempt's (receivers
 * reject old timestamps, so a retry hours later must carry a fresh one).
 * Must never: log or return the secret, or sign anything but the bytes sent.
 */
import { createHmac, createSecretKey, type KeyObject } from 'node:crypto';

export interface SignedHeaders {
  readonly 'webhook-id': string;
  readonly 'webhook-timestamp': string;
  readonly 'webhook-signature': string;
}

const SECRET_PREFIX = 'whsec_';
// Decoding a secret costs more than signing a small body; a device's secret is reused for each of its events.
const keys = new Map<string, KeyObject>();
const MAX_KEYS = 10_000;

/** The key a secret names: the base64 after `whsec_` (Standard Webhooks), decoded once. */
function keyOf(secret: string): KeyObject {
  let key = keys.get(secret);
  if (key === undefined) {
    const bytes = Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64');
    if (bytes.length === 0) throw new Error('a webhook secret cannot be empty');
    key = createSecretKey(bytes);
    if (keys.size >= MAX_KEYS) keys.delete(keys.keys().next().value as string);
    keys.set(secret, key);
  }
  return key;
}

/** One Standard Webhooks signature (`v1,` and the base64 HMAC-SHA256 of `id.seconds.body`), with the native HMAC. */
function sign(secret: string, id: string, seconds: number, payload: string): string {
  return `v1,${createHmac('sha256', keyOf(secret)).update(`${id}.${seconds}.${payload}`, 'utf8').digest('base64')}`;
}

/**
 * Headers for one attempt of event `id` with body `payload`, signed at `at` (epoch ms; whole seconds are
 * sent) with each of `secrets`: several signatures, space-separated, as Standard Webhooks allows during a
 * secret rotation (a receiver accepts the delivery when any one verifies with its secret).
 */
export function signDelivery(secrets: readonly string[], id: string, payload: string, at: number): SignedHeaders {
  const seconds = Math.floor(at / 1000);
  return {
    'webhook-id': id,
    'webhook-timestamp': String(seconds),
    'webhook-signature': secrets.map((secret) => sign(secret, id, seconds, payload)).join(' '),
  };
}

/** The secrets that sign now: the device's, and the one its last rotation replaced while that still overlaps. */
export function signingSecrets(
  device: { secret: string; previous: string | null; previousUntil: number | null },
  now: number,
): string[] {
  const { secret, previous, previousUntil } = device;
  return previous !== null && previousUntil !== null && now < previousUntil && previous !== secret
    ? [secret, previous]
    : [secret];
}
