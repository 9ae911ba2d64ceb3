/**
 * An account webhook as clients see it (docs/webhooks.md, Several webhooks), and the shapes of its requests.
 *
 * Owns: the TypeBox schemas of the webhook routes' bodies and answers, and turning a row into the answer.
 * Must never: show the secret except where the caller asks for it (creation and rotation only).
 */
import { Type, type Static } from '@sinclair/typebox';
import { iso } from '../clock.js';
import { Nullable } from '../shapes.js';
import { WEBHOOK_FORMATS } from '../events/formats/index.js';
import { EVENT_TYPES } from '../events/types.js';
import type { WebhookRow } from './repository.js';
import { MAX_HEADERS } from './service.js';

const EventName = Type.Union([...EVENT_TYPES, '*'].map((type) => Type.Literal(type)));

const fields = {
  url: Type.String({
    minLength: 1,
    maxLength: 2048,
    description: 'Where deliveries are POSTed (http or https)',
    examples: ['https://example.com/webhooks/crm'],
  }),
  devices: Nullable(
    Type.Array(Type.Integer({ minimum: 1, maximum: 2 ** 53 - 1 }), {
      maxItems: 1000,
      description: 'Only events of these devices; absent or null: every device of the account, present and future',
    }),
  ),
  events: Type.Array(EventName, {
    minItems: 1,
    maxItems: EVENT_TYPES.length + 1,
    description: 'Only these event types; absent or `["*"]`: every type',
  }),
  format: Type.String({ enum: [...WEBHOOK_FORMATS], description: 'The body’s format (default `standard`)' }),
  headers: Type.Record(Type.String(), Type.String(), {
    description: `Custom headers sent with each delivery (at most ${MAX_HEADERS}; not Host, Content-Length, Transfer-Encoding, Connection or webhook-*)`,
  }),
  enabled: Type.Boolean({ description: 'false: no new deliveries, and waiting ones end failed (default true)' }),
};

export const CreateWebhookBody = Type.Object(
  {
    url: fields.url,
    devices: Type.Optional(fields.devices),
    events: Type.Optional(fields.events),
    format: Type.Optional(fields.format),
    headers: Type.Optional(fields.headers),
    enabled: Type.Optional(fields.enabled),
  },
  { additionalProperties: false },
);

export const UpdateWebhookBody = Type.Object(
  {
    url: Type.Optional(fields.url),
    devices: Type.Optional(fields.devices),
    events: Type.Optional(fields.events),
    format: Type.Optional(fields.format),
    headers: Type.Optional(fields.headers),
    enabled: Type.Optional(fields.enabled),
  },
  { additionalProperties: false, minProperties: 1 },
);

export const WebhookSchema = Type.Object(
  {
    id: Type.String({ description: '`wh_...`' }),
    url: Type.String(),
    devices: Nullable(Type.Array(Type.Integer(), { description: 'null: every device of the account' })),
    events: Type.Array(Type.String(), { description: '`["*"]`: every event type' }),
    format: Type.Union(WEBHOOK_FORMATS.map((format) => Type.Literal(format))),
    headers: Type.Record(Type.String(), Type.String()),
    enabled: Type.Boolean(),
    secret: Type.Optional(
      Type.String({
        description: 'Standard Webhooks secret (`whsec_...`): in the answers of creation and rotation only',
      }),
    ),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
  },
  { title: 'Webhook' },
);

export type WebhookJson = Static<typeof WebhookSchema>;

/** The webhook as answered; `withSecret` only for creation and rotation. */
export function presentWebhook(row: WebhookRow, withSecret = false): WebhookJson {
  const devices = row.devices === null ? null : (JSON.parse(row.devices) as number[]);
  const events = row.events === null ? ['*'] : (JSON.parse(row.events) as string[]);
  return {
    id: row.id,
    url: row.url,
    devices,
    events,
    format: row.format as WebhookJson['format'],
    headers: JSON.parse(row.headers) as Record<string, string>,
    enabled: Number(row.enabled) === 1,
    ...(withSecret ? { secret: row.secret } : {}),
    created_at: iso(Number(row.created_at)),
    updated_at: iso(Number(row.updated_at)),
  };
}
