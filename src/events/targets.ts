/**
 * Where and how each claimed delivery goes (docs/internals.md, Webhooks): its URL, format, whether answers
 * are read for replies, its signing secrets and custom headers, read with a claim in its transaction. A
 * delivery to a device's own webhook_url reads the device; one to an account webhook reads the webhook.
 *
 * Owns: reading those settings for the deliveries of a claim, and their in-memory shape.
 * Must never: write, or be read outside the claim's transaction (a target read apart from its claim
 * could name a URL the device or webhook no longer has).
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
  /** An account webhook's custom headers (lower-case names); none for a device's own webhook_url. */
  readonly headers: Readonly<Record<string, string>>;
  /** An account webhook that was disabled: its deliveries end unsent. */
  readonly disabled: boolean;
  /** An account webhook's delivery: its answers are never read for replies (only the device's own URL's are). */
  readonly accountWebhook: boolean;
}

/** The targets of a claim: devices' own webhook_urls by device id, account webhooks by webhook id. */
export interface Targets {
  readonly devices: ReadonlyMap<number, Target>;
  readonly webhooks: ReadonlyMap<string, Target>;
}

export const NO_TARGETS: Targets = { devices: new Map(), webhooks: new Map() };

/** The target of one claimed delivery (undefined: its device or webhook is gone). */
export function targetOf(targets: Targets, event: ClaimedEvent): Target | undefined {
  return event.webhook_id === null ? targets.devices.get(event.device_id) : targets.webhooks.get(event.webhook_id);
}

function parseHeaders(text: string): Record<string, string> {
  const value: unknown = JSON.parse(text);
  const out: Record<string, string> = {};
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return out;
  for (const [name, v] of Object.entries(value)) if (typeof v === 'string') out[name.toLowerCase()] = v;
  return out;
}

/** Where and how each delivery of a claim goes (read with the claim, in its transaction). */
export async function readTargets(db: Db, claimed: readonly ClaimedEvent[]): Promise<Targets> {
  const deviceIds = [...new Set(claimed.filter((e) => e.webhook_id === null).map((e) => e.device_id))];
  const webhookIds = [...new Set(claimed.flatMap((e) => (e.webhook_id === null ? [] : [e.webhook_id])))];
  const rows = deviceIds.length === 0 ? [] : await eventsRepository.targets(db, deviceIds);
  const hooks = webhookIds.length === 0 ? [] : await eventsRepository.webhookTargets(db, webhookIds);
  return {
    devices: new Map(
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
          headers: {},
          disabled: false,
          accountWebhook: false,
        },
      ]),
    ),
    webhooks: new Map(
      hooks.map((row) => [
        row.id,
        {
          accountId: Number(row.account_id),
          url: row.url,
          format: webhookFormat(row.format),
          reply: false,
          secret: row.secret,
          previous: row.secret_previous,
          previousUntil: row.secret_previous_until === null ? null : Number(row.secret_previous_until),
          headers: parseHeaders(row.headers),
          disabled: Number(row.enabled) !== 1,
          accountWebhook: true,
        },
      ]),
    ),
  };
}
