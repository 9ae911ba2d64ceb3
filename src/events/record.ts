/**
 * Recording events (docs/internals.md, Webhooks; docs/events.md), inside the transaction of the state
 * change that causes them, so an event exists exactly when its change does.
 *
 * Every event of every device is appended to the event log (`events`, read through log.ts by GET /events, the
 * streams and the brokers) in that transaction; webhook deliveries (`webhook_events`) are made beside it, one row
 * per destination that takes the event.
 *
 * Owns: the event body `{id, type, device: {id, phone}, created_at, data}`
 * (the event types are in types.ts), and which deliveries an event makes: one
 * row per destination, the device's own `webhook_url` (its row's id is the
 * event id) and each matching account webhook (destinations.ts; its row's id
 * is `dlv_...`, its `webhook_id` the webhook's). Delivery is the deliverer's job.
 * Must never: make a delivery for a destination that does not take the event
 * (no webhook_url; setting a URL later does not replay history; a format that
 * does not carry the type: `whatspie_v1` carries incoming messages only,
 * `whatspie_v2` four types; formats/; a webhook whose filters leave it out).
 * The body stored is always the standard one: the format is applied when it
 * is delivered, so a format changed later applies to what is still waiting.
 */
import type { Kysely, Transaction } from 'kysely';
import { newUlid } from '../ids.js';
import { iso } from '../clock.js';
import type { Database, Db } from '../store/schema.js';
import { prepared } from '../store/prepared.js';
import { BulkInsert } from '../store/bulk-insert.js';
import { carries, webhookFormat } from './formats/index.js';
import { accountWebhooks, matches } from './destinations.js';
import type { EventType } from './types.js';

export { EVENT_TYPES, type EventType } from './types.js';

export interface EventDevice {
  readonly id: number;
  readonly account_id: number;
  readonly phone: string | null;
  readonly webhook_url: string | null;
  readonly webhook_format: string;
}

export function newEventId(): string {
  return `evt_${newUlid()}`;
}

/** A delivery to an account webhook (its row id; the event's id is in the payload). */
export function newDeliveryId(): string {
  return `dlv_${newUlid()}`;
}

/** One insert per status change of every message: built once, then only bound (see store/prepared.ts). */
const insertEvent = prepared(
  8,
  (
    db,
    id: string,
    accountId: number,
    deviceId: number,
    type: string,
    payload: string,
    url: string,
    now: number,
    webhookId: string | null,
  ) =>
    db.insertInto('webhook_events').values(pendingEvent(id, accountId, deviceId, type, payload, url, now, webhookId)),
);

/** One insert into the log per recorded event (`recordEvent`). */
const insertLogged = prepared(
  6,
  (db, id: string, accountId: number, deviceId: number, type: string, payload: string, now: number) =>
    db.insertInto('events').values({ id, account_id: accountId, device_id: deviceId, type, payload, created_at: now }),
);

/** An event's row in the log; `seq` and `xact` are set by the database (013d). */
export interface LogRow extends Record<string, unknown> {
  readonly id: string;
  readonly account_id: number;
  readonly device_id: number;
  readonly type: string;
  readonly payload: string;
  readonly created_at: number;
}

const logInsert = new BulkInsert<'events', LogRow>('events', [
  'id',
  'account_id',
  'device_id',
  'type',
  'payload',
  'created_at',
]);

/** An event ready to be stored (see `eventRow` and `insertEvents`): its log row, and its deliveries (none when no destination takes it). */
export interface NewEvent {
  readonly log: LogRow;
  readonly deliveries: readonly EventRow[];
}

/** A webhook delivery of an event, ready to be stored. */
export interface EventRow extends Record<string, unknown> {
  readonly id: string;
  readonly account_id: number;
  readonly device_id: number;
  readonly type: string;
  readonly payload: string;
  readonly url: string;
  readonly status: 'pending';
  readonly attempts: 0;
  readonly next_attempt_at: number;
  readonly locked_until: null;
  readonly created_at: number;
  readonly delivered_at: null;
  readonly failed_at: null;
  readonly webhook_id: string | null;
}

const eventInsert = new BulkInsert<'webhook_events', EventRow>('webhook_events', [
  'id',
  'account_id',
  'device_id',
  'type',
  'payload',
  'url',
  'status',
  'attempts',
  'next_attempt_at',
  'locked_until',
  'created_at',
  'delivered_at',
  'failed_at',
  'webhook_id',
]);

/** A new event's row: due at once, never attempted. */
function pendingEvent(
  id: string,
  accountId: number,
  deviceId: number,
  type: string,
  payload: string,
  url: string,
  now: number,
  webhookId: string | null,
): EventRow {
  return {
    id,
    account_id: accountId,
    device_id: deviceId,
    type,
    payload,
    url,
    status: 'pending',
    attempts: 0,
    next_attempt_at: now,
    locked_until: null,
    created_at: now,
    delivered_at: null,
    failed_at: null,
    webhook_id: webhookId,
  };
}

/**
 * The event to record for the device: always logged; delivered to its webhook URL if it has one whose format
 * carries the type, and to each of its account's enabled webhooks whose filters and format take it. For writers
 * that store many events of one transaction at once (`insertEvents`). `db` is the writer's transaction: the
 * account's webhooks are read with it when not in memory.
 */
export async function eventRows(
  db: Db,
  device: EventDevice,
  type: EventType,
  data: unknown,
  now: number,
): Promise<NewEvent> {
  const own = device.webhook_url !== null && carries(webhookFormat(device.webhook_format), type);
  const hooks = (await accountWebhooks(db, device.account_id)).filter((hook) => matches(hook, device.id, type));
  const id = newEventId();
  const payload = JSON.stringify({
    id,
    type,
    device: { id: device.id, phone: device.phone },
    created_at: iso(now),
    data,
  });
  const log: LogRow = { id, account_id: device.account_id, device_id: device.id, type, payload, created_at: now };
  const deliveries: EventRow[] = [];
  if (own)
    deliveries.push(pendingEvent(id, device.account_id, device.id, type, payload, device.webhook_url!, now, null));
  for (const hook of hooks) {
    deliveries.push(pendingEvent(newDeliveryId(), device.account_id, device.id, type, payload, hook.url, now, hook.id));
  }
  return { log, deliveries };
}

/** Stores events made by `eventRows`, in multi-row inserts; must run in the transaction of their changes. */
export async function insertEvents(db: Db, events: readonly NewEvent[]): Promise<void> {
  await logInsert.run(
    db,
    events.map((event) => event.log),
  );
  await eventInsert.run(
    db,
    events.flatMap((event) => event.deliveries),
  );
}

/**
 * Records one event for the device: appended to the log, with its deliveries (see `eventRows`). Returns the event
 * id. The store rings the EventSignal once the transaction has committed (store/appends.ts): callers do not.
 */
export async function recordEvent(
  db: Kysely<Database> | Transaction<Database>,
  device: EventDevice,
  type: EventType,
  data: unknown,
  now: number,
): Promise<string> {
  const { log, deliveries } = await eventRows(db, device, type, data, now);
  await insertLogged(db, log.id, log.account_id, log.device_id, log.type, log.payload, now);
  const only = deliveries.length === 1 ? deliveries[0] : undefined;
  if (only !== undefined) {
    await insertEvent(db, only.id, only.account_id, only.device_id, type, only.payload, only.url, now, only.webhook_id);
  } else if (deliveries.length > 1) {
    await eventInsert.run(db, deliveries);
  }
  return log.id;
}

/** The event id inside a stored payload (a delivery to an account webhook has an id of its own). */
export function eventIdOf(payload: string): string {
  const { id } = JSON.parse(payload) as { id: string };
  return id;
}
