// What the incoming-media test files share: a gateway on the sandbox with quick deliveries and webhooks, incoming
// media retried within milliseconds and waited for a short while, a 1 MB limit per file, and private media hosts
// allowed (the tests' media server listens on 127.0.0.1).
import { createHash } from 'node:crypto';
import { quickWebhooks } from '../events/helpers.js';

export const DAY_MS = 86_400_000;

export const mediaBuild = {
  sandbox: { deliveryDelayMs: 5, readDelayMs: 5 },
  webhooks: quickWebhooks,
  incomingMedia: { retryBaseMs: 20, readyWaitMs: 300, stallMs: 10_000 },
};

export const mediaConfig = { allowPrivateUrls: true, sendIntervalMs: 0, incomingMediaMaxMb: 1 };

export const sha256Hex = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');
