/**
 * Standard Webhooks signatures (DECISIONS 6): the headers that let a receiver
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

/** Headers for one attempt of event `id` with body `payload`, signed at `at` (epoch ms; whole seconds are sent). */
export function signDelivery(secret: string, id: string, payload: string, at: number): SignedHeaders {
  const seconds = Math.floor(at / 1000);
  return {
    'webhook-id': id,
    'webhook-timestamp': String(seconds),
    'webhook-signature': signer(secret).sign(id, new Date(seconds * 1000), payload),
  };
}
