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
import { Webhook } from 'standardwebhooks';

export interface SignedHeaders {
  readonly 'webhook-id': string;
  readonly 'webhook-timestamp': string;
  readonly 'webhook-signature': string;
}

// Decoding a secret costs more than signing a small body; a device's secret is reused for each of its events.
const signers = new Map<string, Webhook>();
const MAX_SIGNERS = 10_000;

function signer(secret: string): Webhook {
  let webhook = signers.get(secret);
  if (webhook === undefined) {
    webhook = new Webhook(secret);
    if (signers.size >= MAX_SIGNERS) signers.delete(signers.keys().next().value as string);
    signers.set(secret, webhook);
  }
  return webhook;
}

/**
 * Headers for one attempt of event `id` with body `payload`, signed at `at` (epoch ms; whole seconds are
 * sent) with each of `secrets`: several signatures, space-separated, as Standard Webhooks allows during a
 * secret rotation (a receiver accepts the delivery when any one verifies with its secret).
 */
export function signDelivery(secrets: readonly string[], id: string, payload: string, at: number): SignedHeaders {
  const seconds = Math.floor(at / 1000);
  const timestamp = new Date(seconds * 1000);
  return {
    'webhook-id': id,
    'webhook-timestamp': String(seconds),
    'webhook-signature': secrets.map((secret) => signer(secret).sign(id, timestamp, payload)).join(' '),
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
