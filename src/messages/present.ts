/**
 * The message object as clients see it (spec 2.3; docs/internals.md, Sending).
 *
 * Owns: turning a stored row into the API shape, and that shape's schema.
 */
import { Type, type Static } from '@sinclair/typebox';
import { iso } from '../clock.js';
import { Nullable } from '../http/schemas.js';
import type { MessageRow } from './repository.js';

const Time = Nullable(Type.String({ format: 'date-time' }));

export const MessageSchema = Type.Object(
  {
    id: Type.String({ description: 'Unique, time-sortable (ULID); also the id the network sees' }),
    status: Type.Union([
      Type.Literal('pending'),
      Type.Literal('sent'),
      Type.Literal('delivered'),
      Type.Literal('failed'),
    ]),
    type: Type.String(),
    direction: Type.Union([Type.Literal('outgoing'), Type.Literal('incoming')]),
    device: Type.String({ description: 'The device’s number' }),
    receiver: Type.String({ description: 'Recipient number (outgoing) or the device’s number (incoming)' }),
    sender: Nullable(Type.String({ description: 'Incoming only: who sent it' })),
    message: Nullable(Type.String({ description: 'Chat text, or the caption' })),
    file_url: Nullable(Type.String({ description: 'Media messages: the URL the media was fetched from' })),
    params: Type.Object({}, { additionalProperties: true }),
    simulate_typing: Type.Integer(),
    timestamp: Type.String({ format: 'date-time' }),
    sent_at: Time,
    delivered_at: Time,
    read_at: Time,
    failed_at: Time,
    failed_reason: Nullable(Type.String()),
    rendered_as: Type.Optional(
      Type.Literal('text', {
        description:
          'Lists and templates only, once sent: the network delivered it as formatted text with numbered choices instead of its interactive form (WhatsApp; absent when delivered as given)',
      }),
    ),
  },
  { title: 'Message' },
);

export type MessageJson = Static<typeof MessageSchema>;

const at = (ms: number | null) => (ms === null ? null : iso(ms));

/** `params` may be given when the caller holds them already parsed (acceptance), to skip a JSON round trip. */
export function presentMessage(row: MessageRow, params?: Record<string, unknown>): MessageJson {
  return {
    id: row.id,
    status: row.status as MessageJson['status'],
    type: row.type,
    direction: row.direction as MessageJson['direction'],
    device: row.device_phone,
    receiver: row.receiver,
    sender: row.sender,
    message: row.message,
    file_url: row.file_url,
    params: params ?? (JSON.parse(row.params) as Record<string, unknown>),
    simulate_typing: row.simulate_typing,
    timestamp: iso(row.created_at),
    sent_at: at(row.sent_at),
    delivered_at: at(row.delivered_at),
    read_at: at(row.read_at),
    failed_at: at(row.failed_at),
    failed_reason: row.failed_reason,
    ...(row.rendered_as === 'text' ? { rendered_as: 'text' as const } : {}),
  };
}

export const SUCCESS_MESSAGES: Record<string, string> = {
  chat: 'Message sent successfully',
  image: 'Image sent successfully',
  list: 'List message sent successfully',
  file: 'File sent successfully',
  video: 'Video sent successfully',
  audio: 'Audio sent successfully',
  location: 'Location sent successfully',
  template: 'Template message sent successfully',
};
