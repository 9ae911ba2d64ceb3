/**
 * Recording events (docs/internals.md, Webhooks; docs/events.md), inside the transaction of the state
 * change that causes them, so an event exists exactly when its change does.
 *
 * Every event of every device is appended to the event log (`events`, read through log.ts) in that
 * transaction; a webhook delivery (`webhook_events`) is made beside it when the device has a URL.
 *
 * Owns: the event body `{id, type, device: {id, phone}, created_at, data}`
 * (the event types are in types.ts). Delivery is the deliverer's job.
 * Must never: make a delivery for a device without a webhook_url (there is nowhere to
 * deliver; setting a URL later does not replay history), nor one its
 * webhook format does not carry (`whatspie_v1` carries incoming messages only,
 * `whatspie_v2` four types; formats/). The body stored is always the standard
 * one: the format is applied when it is delivered, so a format changed later
 * applies to what is still waiting.
 */
import type { Kysely, Transaction } from 'kysely';
import { newUlid } from '../ids.js';
import { iso } from '../clock.js';
import type { Database, Db } from '../store/schema.js';
import { prepared } from '../store/prepared.js';
import { BulkInsert } from '../store/bulk-insert.js';
import { carries, webhookFormat } from './formats/index.js';
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

/** One insert per status change of every message: built once, then only bound (see store/prepared.ts). */
const insertEvent = prepared(
  7,
  (db, id: string, accountId: number, deviceId: number, type: string, payload: string, url: string, now: number) =>
    db.insertInto('webhook_events').values(pendingEvent(id, accountId, deviceId, type, payload, url, now)),
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

/** An event ready to be stored (see `eventRow` and `insertEvents`): its log row, and its delivery if it has one. */
export interface NewEvent {
  readonly log: LogRow;
  readonly delivery: EventRow | null;
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
  };
}

/**
 * The event to record for the device: always logged; delivered when it has a webhook URL whose format
 * carries the type. For writers that store many events of one transaction at once (`insertEvents`).
 */
export function eventRow(device: EventDevice, type: EventType, data: unknown, now: number): NewEvent {
  const id = newEventId();
  const payload = JSON.stringify({
    id,
    type,
    device: { id: device.id, phone: device.phone },
    created_at: iso(now),
    data,
  });
  const log: LogRow = { id, account_id: device.account_id, device_id: device.id, type, payload, created_at: now };
  const url = device.webhook_url;
  const delivered = url !== null && carries(webhookFormat(device.webhook_format), type);
  return { log, delivery: delivered ? pendingEvent(id, device.account_id, device.id, type, payload, url, now) : null };
}

/** Stores events made by `eventRow`, in multi-row inserts; must run in the transaction of their changes. */
export async function insertEvents(db: Db, events: readonly NewEvent[]): Promise<void> {
  await logInsert.run(
    db,
    events.map((event) => event.log),
  );
  const deliveries: EventRow[] = [];
  for (const event of events) if (event.delivery !== null) deliveries.push(event.delivery);
  await eventInsert.run(db, deliveries);
}

/**
 * Records one event for the device: appended to the log, and a delivery made if it has a webhook URL whose format
 * carries the type. Returns the event id (callers ring the EventSignal once their transaction has committed).
 */
export async function recordEvent(
  db: Kysely<Database> | Transaction<Database>,
  device: EventDevice,
  type: EventType,
  data: unknown,
  now: number,
): Promise<string> {
  const { log, delivery } = eventRow(device, type, data, now);
  await insertLogged(db, log.id, log.account_id, log.device_id, log.type, log.payload, now);
  if (delivery !== null) {
    await insertEvent(
      db,
      delivery.id,
      delivery.account_id,
      delivery.device_id,
      type,
      delivery.payload,
      delivery.url,
      now,
    );
  }
  return log.id;
}
