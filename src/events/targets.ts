/**
 * Where and how each device's webhook deliveries go (docs/internals.md, Webhooks): its URL, format,
 * whether answers are read for replies, and its signing secrets, read with a claim in its transaction.
 *
 * Owns: reading those settings for the devices of a claim, and their in-memory shape.
 * Must never: write, or be read outside the claim's transaction (a target read apart from its claim
 * could name a URL the device no longer has).
 */
import type { Db } from '../store/schema.js';
import { webhookFormat, type WebhookFormat } from './formats/index.js';
import { eventsRepository, type ClaimedEvent } from './repository.js';

export interface Target {
  readonly accountId: number;
  readonly url: string | null;
  readonly format: WebhookFormat;
  readonly reply: boolean;
  readonly secret: string;
  readonly previous: string | null;
  readonly previousUntil: number | null;
}

/** Where and how each device's deliveries go (read with the claim, in its transaction). */
export async function readTargets(db: Db, claimed: readonly ClaimedEvent[]): Promise<Map<number, Target>> {
  const ids = [...new Set(claimed.map((event) => event.device_id))];
  const rows = await eventsRepository.targets(db, ids);
  return new Map(
    rows.map((row) => [
      Number(row.id),
      {
        accountId: Number(row.account_id),
        url: row.webhook_url,
        format: webhookFormat(row.webhook_format),
        reply: row.webhook_reply === 1,
        secret: row.webhook_secret,
        previous: row.webhook_secret_previous,
        previousUntil: row.webhook_secret_previous_until === null ? null : Number(row.webhook_secret_previous_until),
      },
    ]),
  );
}
