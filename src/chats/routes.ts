/**
 * HTTP routes of chats (DECISIONS 16; docs/api.md, Chats): the chat list, a chat's messages, marking a chat read,
 * and archiving, pinning or muting it.
 *
 * Owns: paths, schemas, status codes and answer messages of those routes.
 * Must never: decide a rule (that is service.ts) or touch SQL.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { accountOf } from '../http/auth.js';
import { CodeEnvelope, errorResponses } from '../http/schemas.js';
import { MessageSchema } from '../messages/present.js';
import { Nullable } from '../shapes.js';
import { ChatSchema } from './present.js';
import type { ChatsService } from './service.js';

export interface ChatRoutesOptions {
  readonly chats: ChatsService;
}

const tags = ['Chats'];

const DEVICE_DESCRIPTION = 'The device: its phone number or its id';
const ChatParams = Type.Object({
  chat: Type.String({
    maxLength: 64,
    description:
      'A phone number (the chat with that person), or a group: the gateway’s id of it or its network id (`…@g.us`)',
    examples: ['6281234567891', '120363012345678901@g.us'],
  }),
});
const PageQuery = Type.Object({
  device: Type.Optional(Type.String({ maxLength: 32, description: DEVICE_DESCRIPTION, examples: ['6281234567890'] })),
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
  cursor: Type.Optional(
    Type.String({ maxLength: 200, description: 'The `next_cursor` of the page before; absent for the first page' }),
  ),
});
const DeviceField = Type.Unknown({ description: DEVICE_DESCRIPTION, examples: ['6281234567890'] });
const ReadBody = Type.Object({ device: Type.Optional(DeviceField) });
const SettingsBody = Type.Object({
  device: Type.Optional(DeviceField),
  archived: Type.Optional(
    Type.Unknown({ description: 'true: archive the chat; false: take it out of the archive', examples: [true] }),
  ),
  pinned: Type.Optional(Type.Unknown({ description: 'true: pin the chat; false: unpin it', examples: [true] })),
  muted_until: Type.Optional(
    Type.Unknown({
      description: 'Mute the chat until this time (ISO 8601, in the future); null: unmute',
      examples: ['2030-01-01T00:00:00Z'],
    }),
  ),
});
const page = <T extends Parameters<typeof Type.Array>[0]>(item: T) =>
  CodeEnvelope(Type.Array(item), {
    next_cursor: Nullable(Type.String({ description: 'Pass back as `cursor` for the next page; null on the last' })),
  });

export const chatRoutes: FastifyPluginAsyncTypebox<ChatRoutesOptions> = async (app, { chats }) => {
  app.get(
    '/chats',
    {
      schema: {
        tags,
        summary: 'The device’s chats, most recent first',
        description:
          'Each chat with its last message (either direction, as `GET /messages` shows it), unread count and archive, pin and mute state. Kept as messages are stored; no chat is left out for being archived.',
        querystring: PageQuery,
        response: { 200: page(ChatSchema), ...errorResponses(400, 401, 404) },
      },
    },
    async (request) => {
      const answer = await chats.list(accountOf(request), request.query);
      return { code: 200, status: 200, message: 'OK', ...answer };
    },
  );

  app.get(
    '/chats/:chat/messages',
    {
      schema: {
        tags,
        summary: 'A chat’s messages, both directions, newest first',
        description: 'Each message as `GET /messages` shows it. A chat with no message is an empty page.',
        params: ChatParams,
        querystring: PageQuery,
        response: { 200: page(MessageSchema), ...errorResponses(400, 401, 404) },
      },
    },
    async (request) => {
      const answer = await chats.messages(accountOf(request), request.params.chat, request.query);
      return { code: 200, status: 200, message: 'OK', ...answer };
    },
  );

  app.post(
    '/chats/:chat/read',
    {
      schema: {
        tags,
        summary: 'Mark every unread received message of the chat read, on the network',
        description:
          'Recorded at once (`unread_count` 0, each message’s `read_at` set); the read receipts are queued behind the device’s earlier messages, as `POST /messages/{id}/read`. The device must be connected (400 `Device not connected`). Answers the chat.',
        params: ChatParams,
        body: Type.Optional(ReadBody),
        response: { 200: CodeEnvelope(ChatSchema), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const data = await chats.read(accountOf(request), request.params.chat, request.body);
      return { code: 200, status: 200, message: 'Chat marked read', data };
    },
  );

  app.patch(
    '/chats/:chat',
    {
      schema: {
        tags,
        summary: 'Archive, pin or mute the chat, on the network',
        description:
          'At least one of `archived`, `pinned`, `muted_until`. Carried out on the network first (on WhatsApp an app-state change the phone shows too), then stored; nothing is stored that the network refused. The device must be connected (400 `Device not connected`). Answers the chat.',
        params: ChatParams,
        body: SettingsBody,
        response: { 200: CodeEnvelope(ChatSchema), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const data = await chats.modify(accountOf(request), request.params.chat, request.body);
      return { code: 200, status: 200, message: 'Chat updated', data };
    },
  );
};
