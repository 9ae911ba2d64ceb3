/**
 * Webhook formats (docs/internals.md, Whatspie compatibility): one stored event, rendered per device at
 * delivery time (docs/internals.md, Whatspie compatibility: edges own their translations).
 *
 * Owns: the list of formats, which event types each one carries, which
 * formats may answer with replies, and choosing the renderer. Each renderer
 * (standard.ts, whatspie-v1.ts, whatspie-v2.ts) turns the stored event (the
 * Standard Webhooks body; docs/internals.md, Webhooks) into the bytes sent.
 * Must never: touch the store or the network; know about HTTP beyond the
 * body's bytes.
 */
import type { EventType, StoredEvent } from '../types.js';
import { renderStandard } from './standard.js';
import { WHATSPIE_V1_TYPES, renderWhatspieV1 } from './whatspie-v1.js';
import { WHATSPIE_V2_TYPES, renderWhatspieV2 } from './whatspie-v2.js';

export const WEBHOOK_FORMATS = ['standard', 'whatspie_v1', 'whatspie_v2'] as const;
export type WebhookFormat = (typeof WEBHOOK_FORMATS)[number];
export const DEFAULT_WEBHOOK_FORMAT: WebhookFormat = 'standard';

export type { StoredEvent } from '../types.js';

export function isWebhookFormat(value: unknown): value is WebhookFormat {
  return typeof value === 'string' && (WEBHOOK_FORMATS as readonly string[]).includes(value);
}

/** A format stored before it was known here (or hand-edited) reads as the default. */
export function webhookFormat(value: string | null | undefined): WebhookFormat {
  return isWebhookFormat(value) ? value : DEFAULT_WEBHOOK_FORMAT;
}

/** Whether the format has a body for this event type (others are not recorded, or end `skipped`). */
export function carries(format: WebhookFormat, type: string): boolean {
  switch (format) {
    case 'standard':
      return true;
    case 'whatspie_v1':
      return WHATSPIE_V1_TYPES.has(type as EventType);
    case 'whatspie_v2':
      return WHATSPIE_V2_TYPES.has(type as EventType);
  }
}

/**
 * Whether a 2xx answer to a `message.incoming` delivery is read for replies:
 * always for the Whatspie formats (their receivers are written for it), and
 * for `standard` only when the device's `webhook_reply` is on.
 */
export function answersWithReplies(format: WebhookFormat, webhookReply: boolean, type: string): boolean {
  if (type !== 'message.incoming') return false;
  return format === 'standard' ? webhookReply : true;
}

/**
 * The body sent for a stored event in a format, or null when the format does
 * not carry the event's type. `payload` is the stored text: the standard
 * format sends it byte for byte.
 */
export function renderBody(format: WebhookFormat, type: string, payload: string): string | null {
  if (!carries(format, type)) return null;
  if (format === 'standard') return renderStandard(payload);
  const event = JSON.parse(payload) as StoredEvent;
  return JSON.stringify(format === 'whatspie_v1' ? renderWhatspieV1(event) : renderWhatspieV2(event));
}
