/**
 * Recording webhook events (docs/internals.md, Webhooks), inside the transaction of the state
 * change that causes them, so an event exists exactly when its change does.
 *
 * Owns: the event body `{id, type, device: {id, phone}, created_at, data}`
 * (the event types are in types.ts). Delivery is the deliverer's job.
 * Must never: record for a device without a webhook_url (there is nowhere to
 * deliver; setting a URL later does not replay history), nor an event its
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

/** An event ready to be stored (see `eventRow` and `insertEvents`). */
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
 * The event to record for the device, or null when it has no webhook URL or its format does not
 * carry the type. For writers that store many events of one transaction at once (`insertEvents`).
 */
export function eventRow(device: EventDevice, type: EventType, data: unknown, now: number): EventRow | null {
  if (device.webhook_url === null || !carries(webhookFormat(device.webhook_format), type)) return null;
  const id = newEventId();
  const payload = JSON.stringify({
    id,
    type,
    device: { id: device.id, phone: device.phone },
    created_at: iso(now),
    data,
  });
  return pendingEvent(id, device.account_id, device.id, type, payload, device.webhook_url, now);
}

/** Stores events made by `eventRow`, in multi-row inserts; must run in the transaction of their changes. */
export function insertEvents(db: Db, rows: readonly EventRow[]): Promise<void> {
  return eventInsert.run(db, rows);
}

/** Records one event for the device if it has a webhook URL whose format carries the type. Returns the event id, or null. */
export async function recordEvent(
  db: Kysely<Database> | Transaction<Database>,
  device: EventDevice,
  type: EventType,
  data: unknown,
  now: number,
): Promise<string | null> {
  const row = eventRow(device, type, data, now);
  if (row === null) return null;
  await insertEvent(db, row.id, row.account_id, row.device_id, row.type, row.payload, row.url, now);
  return row.id;
}
