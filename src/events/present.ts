/**
 * A webhook delivery as clients see it in the delivery log (docs/internals.md, Webhooks).
 *
 * Owns: turning an event row and its attempt rows into the API shape, and
 * that shape's schema.
 * Must never: show the signing secret or anything of another device.
 */
import { Type, type Static } from '@sinclair/typebox';
import { iso } from '../clock.js';
import { Nullable } from '../shapes.js';
import type { AttemptRow, EventRow } from './repository.js';
import { WEBHOOK_FORMATS, renderBody, webhookFormat, type WebhookFormat } from './formats/index.js';
import { EVENT_TYPES } from './types.js';

const Time = Nullable(Type.String({ format: 'date-time' }));

export const DELIVERY_STATUSES = ['pending', 'delivered', 'failed', 'skipped'] as const;

const ReplySchema = Type.Object(
  {
    ignored: Nullable(Type.String({ description: 'Why the answer as a whole was not read as replies' })),
    replies: Type.Array(
      Type.Object(
        {
          type: Type.String({ description: 'The reply’s type as the answer gave it' }),
          status: Type.Union([Type.Literal('queued'), Type.Literal('already_queued'), Type.Literal('refused')]),
          message_id: Type.Optional(Type.String({ description: 'queued: the message sent (see GET /messages/{id})' })),
          error: Type.Optional(
            Type.Object(
              {
                code: Type.Integer(),
                message: Type.String(),
                error: Type.Optional(Type.String()),
                errors: Type.Optional(Type.Record(Type.String(), Type.Array(Type.String()))),
              },
              { description: 'refused: the error POST /messages would have answered' },
            ),
          ),
        },
        { additionalProperties: false },
      ),
      { description: 'One per reply asked for, in the answer’s order' },
    ),
  },
  {
    title: 'WebhookReply',
    description: 'Reply by response: what the receiver’s answer asked to send, and what came of it',
  },
);

export const AttemptSchema = Type.Object(
  {
    attempted_at: Type.String({ format: 'date-time' }),
    url: Nullable(Type.String({ description: 'Where this attempt went' })),
    http_status: Nullable(Type.Integer({ description: 'The receiver’s HTTP status; null when none came' })),
    latency_ms: Type.Integer({ description: 'Time to the answer’s status (or to the failure)' }),
    error: Nullable(Type.String({ description: 'Why the attempt failed (or was skipped); null on success' })),
    format: Nullable(
      Type.Union(
        WEBHOOK_FORMATS.map((format) => Type.Literal(format)),
        { description: 'The webhook format the attempt was written in; null when nothing was sent' },
      ),
    ),
    reply: Nullable(ReplySchema),
  },
  { title: 'WebhookAttempt' },
);

export const DeliverySchema = Type.Object(
  {
    id: Type.String({ description: 'The event id; also the `webhook-id` header receivers dedupe by' }),
    type: Type.String({ description: 'Event type, e.g. `message.delivered`' }),
    status: Type.Union(DELIVERY_STATUSES.map((status) => Type.Literal(status))),
    url: Type.String({ description: 'The device’s webhook URL when the event happened' }),
    format: Type.Union(
      WEBHOOK_FORMATS.map((format) => Type.Literal(format)),
      { description: 'The format `payload` is written in: the last attempt’s, else the device’s now' },
    ),
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
      {
        additionalProperties: true,
        description:
          'The body sent in `format` (byte for byte, as JSON text); the stored standard body when `format` has none for the type',
      },
    ),
    attempts: Type.Array(AttemptSchema, { description: 'Oldest first' }),
  },
  { title: 'WebhookDelivery' },
);

export type DeliveryJson = Static<typeof DeliverySchema>;

/** What a delivery log (a device's webhook or an account webhook) can be narrowed to, beside its page. */
export const DeliveryFilterQuery = Type.Object({
  status: Type.Optional(Type.String({ enum: [...DELIVERY_STATUSES] })),
  type: Type.Optional(Type.String({ enum: [...EVENT_TYPES] })),
});

/** The answer with a page of a delivery log. */
export function deliveriesPage(
  { page, per_page }: { page: number; per_page: number },
  { data, total }: { data: DeliveryJson[]; total: number },
) {
  return {
    code: 200,
    status: 200,
    message: 'Webhook deliveries retrieved successfully',
    data,
    meta: { page, per_page, total },
  };
}

const at = (ms: number | null) => (ms === null ? null : iso(Number(ms)));

/** `deviceFormat`: the device's webhook format now, for a delivery not attempted in any format yet. */
export function presentDelivery(
  row: EventRow,
  attempts: readonly AttemptRow[],
  deviceFormat: WebhookFormat,
): DeliveryJson {
  const format = webhookFormat(attempts.findLast((attempt) => attempt.format !== null)?.format ?? deviceFormat);
  const body = renderBody(format, row.type, row.payload) ?? row.payload;
  return {
    id: row.id,
    type: row.type,
    status: row.status as DeliveryJson['status'],
    url: row.url,
    format,
    created_at: iso(Number(row.created_at)),
    // While leased, next_attempt_at holds the lease's end, not a time the client should wait for.
    next_attempt_at: row.status === 'pending' && row.locked_until === null ? iso(Number(row.next_attempt_at)) : null,
    delivered_at: at(row.delivered_at),
    failed_at: at(row.failed_at),
    payload: JSON.parse(body) as Record<string, unknown>,
    attempts: attempts.map((attempt) => ({
      attempted_at: iso(Number(attempt.attempted_at)),
      url: attempt.url,
      http_status: attempt.http_status,
      latency_ms: attempt.latency_ms,
      error: attempt.error,
      format: attempt.format === null ? null : webhookFormat(attempt.format),
      reply: attempt.reply === null ? null : (JSON.parse(attempt.reply) as DeliveryJson['attempts'][number]['reply']),
    })),
  };
}
