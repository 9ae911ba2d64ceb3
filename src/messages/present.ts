/**
 * The message object as clients see it (spec 2.3; docs/internals.md, Sending).
 *
 * Owns: turning a stored row into the API shape, and that shape's schema.
 */
import { Type, type Static } from '@sinclair/typebox';
import { iso } from '../clock.js';
import { Nullable } from '../shapes.js';
import { pollTally, type PollVoteRow } from './poll-votes.js';
import { storedPoll } from './poll-votes-record.js';
import type { ShownMedia } from '../media/shown.js';
import type { ReactionRow } from './reactions.js';
import type { ReceiptRow } from './receipts.js';
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
    sender: Nullable(
      Type.String({
        description:
          'Incoming only: who sent it: a phone number, or on WhatsApp the sender’s LID (`12345@lid`) while no number is known for it',
      }),
    ),
    from_lid: Type.Optional(
      Type.String({
        description:
          'Incoming only, on WhatsApp: the sender’s LID (`12345@lid`) when the network named one; equal to `sender` while no number is known (docs/whatsapp.md, Senders known by LID)',
      }),
    ),
    message: Nullable(Type.String({ description: 'Chat text, or the caption' })),
    file_url: Nullable(
      Type.String({
        description:
          'Outgoing media: the URL the media was fetched from. Incoming media: the gateway’s signed URL of it (`/media/{media_id}?expires=…&signature=…`, fetched without a token until it expires; docs/api.md, Media); null when there is nothing to fetch',
      }),
    ),
    media: Type.Optional(
      Type.Object(
        {
          status: Type.Union(
            ['pending', 'stored', 'too_large', 'failed', 'expired'].map((status) => Type.Literal(status)),
          ),
          mimetype: Type.String(),
          size: Nullable(Type.Integer({ description: 'Bytes; null until known' })),
          file_name: Nullable(Type.String()),
          sha256: Nullable(Type.String({ description: 'Hex SHA-256 of the bytes; null until known' })),
        },
        {
          description:
            'Incoming media only: its download (`pending` while it runs; the message never waits for it), served at `file_url` once `stored` (docs/webhooks.md, Incoming media)',
        },
      ),
    ),
    params: Type.Object(
      {},
      {
        additionalProperties: true,
        description:
          'The content by type (docs/webhooks.md, Incoming messages); an incoming reply also has `quoted: {message_id, network_id}` (`message_id` null when the gateway does not have the quoted message), one that mentions people `mentions: [phones]`',
      },
    ),
    simulate_typing: Type.Integer(),
    timestamp: Type.String({ format: 'date-time' }),
    sent_at: Time,
    delivered_at: Time,
    read_at: Time,
    failed_at: Time,
    failed_reason: Nullable(Type.String()),
    receipts: Type.Optional(
      Type.Array(
        Type.Object({
          phone: Type.String({
            description:
              'The member’s number; the network’s own id for the member (`…@lid`) while its number is unknown',
          }),
          delivered_at: Time,
          read_at: Time,
        }),
        {
          description:
            'Outgoing group messages only: each member whose phone has receipted it. The message is `delivered` (and has `read_at`) from the first member’s receipt on',
        },
      ),
    ),
    reactions: Type.Optional(
      Type.Array(
        Type.Object({
          from: Type.String({
            description: 'The reacting phone’s number (on WhatsApp its LID form while no number is known)',
          }),
          emoji: Type.String(),
        }),
        {
          description:
            'The reactions phones show on the message, one per phone, oldest first; absent when there are none (docs/webhooks.md, Reactions, edits and deletes)',
        },
      ),
    ),
    poll: Type.Optional(
      Type.Object(
        {
          name: Type.String(),
          options: Type.Array(Type.String()),
          selectable_count: Type.Integer({ minimum: 1 }),
          tally: Type.Array(
            Type.Object({
              option: Type.String(),
              count: Type.Integer({ minimum: 0 }),
              voters: Type.Array(Type.String(), { description: 'Who chose it, in the order they voted' }),
            }),
            { description: 'Every option, in the poll’s order, with each voter’s current vote counted' },
          ),
        },
        {
          description:
            'Polls only (ours and incoming): the poll and its votes so far (docs/webhooks.md, Poll votes); a voter’s later vote replaces the earlier one',
        },
      ),
    ),
    edited_at: Type.Optional(
      Type.String({
        format: 'date-time',
        description:
          'When its author edited it on the network (`message` and `params` show the new text); absent when never',
      }),
    ),
    deleted_at: Type.Optional(
      Type.String({
        format: 'date-time',
        description: 'When its author deleted it for everyone on the network (its content is kept); absent when never',
      }),
    ),
    source: Type.Optional(
      Type.Literal('history', {
        description:
          'Set when the message came from the network’s history sync at pairing (docs/api.md, History sync): stored, never announced with `message.incoming`; absent for a message sent or received live',
      }),
    ),
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

export type { ShownMedia };

const at = (ms: number | null) => (ms === null ? null : iso(ms));

/** Whether the message object carries `receipts`: an outgoing message to a group. */
export const hasMemberReceipts = (row: Pick<MessageRow, 'direction' | 'receiver'>): boolean =>
  row.direction === 'outgoing' && row.receiver.endsWith('@g.us');

function withoutFromLid(params: Record<string, unknown>): Record<string, unknown> {
  const { from_lid: _shownBeside, ...rest } = params;
  return rest;
}

/**
 * `params` may be given when the caller holds them already parsed (acceptance), to skip a JSON round trip.
 * `receipts`, the group members' (receipts.ts), are shown when given for an outgoing group message;
 * `reactions` (reactions.ts) when given and not empty; a poll its `poll` with the tally of `votes` (none when not
 * given); `media`, an incoming message's (src/media/), when given.
 */
export function presentMessage(
  row: MessageRow,
  params?: Record<string, unknown>,
  receipts?: ReadonlyArray<ReceiptRow>,
  reactions?: ReadonlyArray<ReactionRow>,
  votes?: ReadonlyArray<PollVoteRow>,
  media?: ShownMedia,
): MessageJson {
  const stored = params ?? (JSON.parse(row.params) as Record<string, unknown>);
  // Kept among the params as `group_id` is (events/incoming.ts), shown beside `sender`.
  const fromLid = row.direction === 'incoming' ? stored.from_lid : undefined;
  return {
    id: row.id,
    status: row.status as MessageJson['status'],
    type: row.type,
    direction: row.direction as MessageJson['direction'],
    device: row.device_phone,
    receiver: row.receiver,
    sender: row.sender,
    ...(typeof fromLid === 'string' ? { from_lid: fromLid } : {}),
    message: row.message,
    file_url: media === undefined ? row.file_url : media.fileUrl,
    ...(media === undefined ? {} : { media: media.media }),
    params: typeof fromLid === 'string' ? withoutFromLid(stored) : stored,
    simulate_typing: row.simulate_typing,
    timestamp: iso(row.created_at),
    sent_at: at(row.sent_at),
    delivered_at: at(row.delivered_at),
    read_at: at(row.read_at),
    failed_at: at(row.failed_at),
    failed_reason: row.failed_reason,
    ...(receipts !== undefined && hasMemberReceipts(row)
      ? {
          receipts: receipts.map((r) => ({ phone: r.phone, delivered_at: at(r.delivered_at), read_at: at(r.read_at) })),
        }
      : {}),
    ...(reactions !== undefined && reactions.length > 0
      ? { reactions: reactions.map((r) => ({ from: r.from, emoji: r.emoji })) }
      : {}),
    ...pollOf(row, stored, votes),
    ...(row.edited_at === null || row.edited_at === undefined ? {} : { edited_at: iso(row.edited_at) }),
    ...(row.deleted_at === null || row.deleted_at === undefined ? {} : { deleted_at: iso(row.deleted_at) }),
    ...(row.source === 'history' ? { source: 'history' as const } : {}),
    ...(row.rendered_as === 'text' ? { rendered_as: 'text' as const } : {}),
  };
}

function pollOf(
  row: MessageRow,
  stored: Record<string, unknown>,
  votes: ReadonlyArray<PollVoteRow> = [],
): { poll?: MessageJson['poll'] } {
  const poll = storedPoll(row);
  if (poll === null) return {};
  const name = typeof stored.name === 'string' ? stored.name : (row.message ?? '');
  const tally = pollTally(poll.options, votes);
  return { poll: { name, options: poll.options, selectable_count: poll.selectableCount, tally } };
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
  sticker: 'Sticker sent successfully',
  contact: 'Contact sent successfully',
  poll: 'Poll sent successfully',
};
