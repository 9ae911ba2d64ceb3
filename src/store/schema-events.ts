/**
 * The store's tables of events: the event log, webhook deliveries and their attempts, and the account's webhooks
 * (schema.ts lists them in the Database; the columns are explained here).
 *
 * Owns: these row shapes only.
 * Must never: hold queries or behaviour.
 */
import type { Generated } from 'kysely';

/** The event log (013d; events/log.ts): every event of every device, in (xact, seq) order. */
export interface EventsTable {
  seq: Generated<number>;
  /** The inserting transaction on PostgreSQL (set by the database); 0 on SQLite. */
  xact: Generated<number>;
  /** The event id (`evt_…`). */
  id: string;
  account_id: number;
  device_id: number;
  type: string;
  /** The standard JSON body. */
  payload: string;
  created_at: number;
}

export interface WebhookEventsTable {
  /** Also the `webhook-id` header: receivers dedupe by it. */
  id: string;
  account_id: number;
  device_id: number;
  type: string;
  /** The exact JSON body that is signed and sent. */
  payload: string;
  /** The device's webhook_url when the event happened. */
  url: string;
  /** pending, delivered, failed, or skipped (the device's format has no body for the type). */
  status: string;
  attempts: number;
  next_attempt_at: number;
  locked_until: number | null;
  /** 1 when a manual retry was asked for while an attempt was in flight (006); a claim clears it. */
  retry_requested: Generated<number>;
  created_at: number;
  delivered_at: number | null;
  failed_at: number | null;
  /** The account webhook this delivery goes to; null: the device's own `webhook_url` (013e). */
  webhook_id: string | null;
}

/** An account's webhook, one destination of its events (013e; src/webhooks/). */
export interface WebhooksTable {
  /** `wh_...` */
  id: string;
  account_id: number;
  url: string;
  /** JSON array of device ids; null: every device of the account, present and future. */
  devices: string | null;
  /** JSON array of event types; null: every type. */
  events: string | null;
  format: string;
  /** JSON object of custom headers sent with each delivery. */
  headers: string;
  enabled: number;
  /** Signs its deliveries. Secret: never logged, returned only at creation and rotation. */
  secret: string;
  secret_previous: string | null;
  secret_previous_until: number | null;
  created_at: number;
  updated_at: number;
}

export interface WebhookAttemptsTable {
  id: Generated<number>;
  event_id: string;
  attempted_at: number;
  http_status: number | null;
  latency_ms: number;
  error: string | null;
  /** Where this attempt went (the device's URL may change between attempts). Null in rows from before 005. */
  url: string | null;
  /** The webhook format this attempt was sent in; null before 008d (standard). */
  format: string | null;
  /** Reply by response: what the answer asked to send and what came of it (JSON); null when it could not reply. */
  reply: string | null;
}
