/**
 * The event types and the stored event's shape, below both the recording (record.ts) and the webhook
 * formats (formats/), which name them without importing each other.
 *
 * Owns: the list of event types and the shape renderers read.
 * Must never: import anything, or hold behaviour.
 */
export const EVENT_TYPES = [
  'message.incoming',
  'message.sent',
  'message.delivered',
  'message.read',
  'message.failed',
  'message.reaction',
  'message.edited',
  'message.deleted',
  'poll.vote',
  'device.paired',
  'device.disconnected',
  'device.qr_expired',
  'device.history_synced',
  'group.participants_added',
  'group.participants_removed',
  'group.participants_promoted',
  'group.participants_demoted',
  'group.updated',
  'group.joined',
  'group.left',
  'contact.lid_resolved',
  'contact.updated',
  'call.incoming',
] as const;

export type EventType = (typeof EVENT_TYPES)[number];

/** A stored event as the renderers read it: the Standard Webhooks body (written by record.ts). */
export interface StoredEvent {
  readonly id: string;
  readonly type: string;
  readonly device: { readonly id: number; readonly phone: string | null };
  readonly created_at: string;
  readonly data: Record<string, unknown>;
}
