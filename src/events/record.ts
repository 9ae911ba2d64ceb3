/**
 * Recording webhook events (DECISIONS 6), inside the transaction of the state
 * change that causes them, so an event exists exactly when its change does.
 *
 * Owns: the event body `{id, type, device: {id, phone}, created_at, data}`
 * and the event types. Delivery is the deliverer's job.
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
import type { Database } from '../store/schema.js';
import { prepared } from '../store/prepared.js';
import { carries, webhookFormat } from './formats/index.js';

export const EVENT_TYPES = [
  'message.incoming',
  'message.sent',
  'message.delivered',
  'message.read',
  'message.failed',
  'device.paired',
  'device.disconnected',
  'device.qr_expired',
  'group.participants_added',
] as const;

export type EventType = (typeof EVENT_TYPES)[number];

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
    db.insertInto('webhook_events').values({
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
    }),
);

/** Records one event for the device if it has a webhook URL whose format carries the type. Returns the event id, or null. */
export async function recordEvent(
  db: Kysely<Database> | Transaction<Database>,
  device: EventDevice,
  type: EventType,
  data: unknown,
  now: number,
): Promise<string | null> {
  if (device.webhook_url === null || !carries(webhookFormat(device.webhook_format), type)) return null;
  const id = newEventId();
  const payload = JSON.stringify({
    id,
    type,
    device: { id: device.id, phone: device.phone },
    created_at: iso(now),
    data,
  });
  await insertEvent(db, id, device.account_id, device.id, type, payload, device.webhook_url, now);
  return id;
}
