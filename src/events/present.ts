/**
 * A webhook delivery as clients see it in the delivery log (DECISIONS 6).
 *
 * Owns: turning an event row and its attempt rows into the API shape, and
 * that shape's schema.
 * Must never: show the signing secret or anything of another device.
 */
import { Type, type Static } from '@sinclair/typebox';
import { iso } from '../clock.js';
import { Nullable } from '../http/schemas.js';
import type { AttemptRow, EventRow } from './repository.js';

const Time = Nullable(Type.String({ format: 'date-time' }));

export const DELIVERY_STATUSES = ['pending', 'delivered', 'failed'] as const;

export const AttemptSchema = Type.Object(
  {
    attempted_at: Type.String({ format: 'date-time' }),
    url: Nullable(Type.String({ description: 'Where this attempt went' })),
    http_status: Nullable(Type.Integer({ description: 'The receiver’s HTTP status; null when none came' })),
    latency_ms: Type.Integer({ description: 'Time to the answer’s status (or to the failure)' }),
    error: Nullable(Type.String({ description: 'Why the attempt failed; null on success' })),
  },
  { title: 'WebhookAttempt' },
);

export const DeliverySchema = Type.Object(
  {
    id: Type.String({ description: 'The event id; also the `webhook-id` header receivers dedupe by' }),
    type: Type.String({ description: 'Event type, e.g. `message.delivered`' }),
    status: Type.Union(DELIVERY_STATUSES.map((status) => Type.Literal(status))),
    url: Type.String({ description: 'The device’s webhook URL when the event happened' }),
    created_at: Type.String({ format: 'date-time' }),
    next_attempt_at: Nullable(
      Type.String({
        format: 'date-time',
        description: 'Pending only: when it is tried next; null while an attempt is under way',
      }),
    ),
    delivered_at: Time,
    failed_at: Time,
    payload: Type.Object(
      {},
      { additionalProperties: true, description: 'The body sent (byte for byte, as JSON text)' },
    ),
    attempts: Type.Array(AttemptSchema, { description: 'Oldest first' }),
  },
  { title: 'WebhookDelivery' },
);

export type DeliveryJson = Static<typeof DeliverySchema>;

const at = (ms: number | null) => (ms === null ? null : iso(Number(ms)));

export function presentDelivery(row: EventRow, attempts: readonly AttemptRow[]): DeliveryJson {
  return {
    id: row.id,
    type: row.type,
    status: row.status as DeliveryJson['status'],
    url: row.url,
    created_at: iso(Number(row.created_at)),
    // While leased, next_attempt_at holds the lease's end, not a time the client should wait for.
    next_attempt_at: row.status === 'pending' && row.locked_until === null ? iso(Number(row.next_attempt_at)) : null,
    delivered_at: at(row.delivered_at),
    failed_at: at(row.failed_at),
    payload: JSON.parse(row.payload) as Record<string, unknown>,
    attempts: attempts.map((attempt) => ({
      attempted_at: iso(Number(attempt.attempted_at)),
      url: attempt.url,
      http_status: attempt.http_status,
      latency_ms: attempt.latency_ms,
      error: attempt.error,
    })),
  };
}
