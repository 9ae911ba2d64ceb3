/**
 * Chats as clients see them (DECISIONS 16): `{id, type, name, last_message, unread_count, archived, pinned,
 * muted_until}`, with its schema, and the cursors of the chat routes.
 *
 * Owns: turning a stored chat row (and its last message's object) into the API shape, and the cursors' encoding.
 * Must never: read the store or the network.
 */
import { Type, type Static } from '@sinclair/typebox';
import { iso } from '../clock.js';
import { ApiError } from '../errors.js';
import { MessageSchema, type MessageJson } from '../messages/present.js';
import { Nullable } from '../shapes.js';
import type { ChatRow } from './repository.js';

export const ChatSchema = Type.Object({
  id: Type.String({
    description:
      'The other person’s phone number for a chat with one person, the group’s network id (`…@g.us`) for a group',
    examples: ['6281234567891'],
  }),
  type: Type.Union([Type.Literal('user'), Type.Literal('group')]),
  name: Nullable(Type.String({ description: 'A group’s subject; a name the network gave the chat; else null' })),
  last_message: Nullable(
    Type.Unsafe<MessageJson>({
      ...MessageSchema,
      description: 'The newest message of the chat, either direction, as `GET /messages` shows it; null when none',
    }),
  ),
  unread_count: Type.Integer({ minimum: 0, description: 'Received messages of the chat not marked read' }),
  archived: Type.Boolean(),
  pinned: Type.Boolean(),
  muted_until: Nullable(Type.String({ format: 'date-time', description: 'Muted until then; null when not muted' })),
});

export type ChatJson = Static<typeof ChatSchema>;

export function presentChat(row: ChatRow, name: string | null, last: MessageJson | null): ChatJson {
  return {
    id: row.chat,
    type: row.type === 'group' ? 'group' : 'user',
    name,
    last_message: last,
    unread_count: Number(row.unread_count),
    archived: Number(row.archived) === 1,
    pinned: Number(row.pinned) === 1,
    muted_until: row.muted_until === null ? null : iso(Number(row.muted_until)),
  };
}

const CURSOR_RULE = 'is not a cursor from this API';

/** A cursor: the position `(time, key)` after which the next page starts, opaque to clients. */
export function encodeCursor(at: number, key: string): string {
  return Buffer.from(`${at}:${key}`).toString('base64url');
}

export function decodeCursor(cursor: string): { at: number; key: string } {
  const text = Buffer.from(cursor, 'base64url').toString();
  const colon = text.indexOf(':');
  const at = Number(text.slice(0, colon));
  const key = text.slice(colon + 1);
  if (colon < 1 || !Number.isSafeInteger(at) || at < 0 || key === '') {
    throw new ApiError('VALIDATION_FAILED', { errors: { cursor: [CURSOR_RULE] } });
  }
  return { at, key };
}
