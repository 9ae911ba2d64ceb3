/**
 * The `whatspie_v2` webhook format (docs/internals.md, Whatspie compatibility): `{type, data}` with
 *
 *   message_incoming    data: the v1 body (whatspie-v1.ts)
 *   message_read        {message_id, read_at}
 *   message_failed      {message_id, status: "ERROR", reason}
 *   device_disconnected {device_id, status: "UNPAIRED", reason}
 *
 * Owns: that mapping from the stored events `message.incoming`,
 * `message.read`, `message.failed` and `device.disconnected` (a logout: the
 * device is UNPAIRED). `message_id` is the gateway's message id (the `id` of
 * `POST /messages`' answer); `read_at` is ISO 8601, as in the message object.
 * Other event types have no v2 body.
 * Must never: add a field the stored event does not justify.
 */
import type { EventType, StoredEvent } from '../types.js';
import { whatspieIncoming } from './whatspie-v1.js';

export const WHATSPIE_V2_TYPES: ReadonlySet<EventType> = new Set<EventType>([
  'message.incoming',
  'message.read',
  'message.failed',
  'device.disconnected',
]);

export function renderWhatspieV2(event: StoredEvent): Record<string, unknown> {
  const { data } = event;
  switch (event.type) {
    case 'message.incoming':
      return { type: 'message_incoming', data: whatspieIncoming(data) };
    case 'message.read':
      return { type: 'message_read', data: { message_id: data.id, read_at: data.read_at ?? null } };
    case 'message.failed':
      return {
        type: 'message_failed',
        data: { message_id: data.id, status: 'ERROR', reason: data.failed_reason ?? null },
      };
    case 'device.disconnected':
      return {
        type: 'device_disconnected',
        data: { device_id: event.device.id, status: 'UNPAIRED', reason: data.reason ?? null },
      };
    default:
      // carries() keeps other types away; a type added later without a v2 body must not be sent half-made.
      throw new Error(`no whatspie_v2 body for ${event.type}`);
  }
}
