/**
 * HTTP routes of messages (spec 4.5; docs/internals.md, Sending): send, get one, list; and the message actions
 * (react, edit, cancel or delete, mark read, forward: docs/api.md, Message actions), decided by actions.ts.
 *
 * Owns: paths, schemas, status codes and the Idempotency-Key header. The body
 * of `POST /messages` is documented with the message schemas
 * (src/messages/schemas.ts) and validated by the service against the same
 * schemas, so that every mistake gets the contract's own message.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { accountOf } from '../http/auth.js';
import { ok } from '../http/envelope.js';
import { ApiError } from '../errors.js';
import { CodeEnvelope, NoFieldsBody, Nullable, errorResponses } from '../http/schemas.js';
import { validatedByHandler } from '../http/validation.js';
import { MessageSchema } from './present.js';
import { SendBodySchema } from './schemas.js';
import type { MessagesService } from './service.js';
import type { MessageActions } from './actions.js';
import type { FastifyRequest } from 'fastify';

const tags = ['Messages'];

// Message actions (docs/api.md, Message actions): bodies documented here, validated by actions-rules.ts.
const params = Type.Object({ id: Type.String({ maxLength: 64, description: 'The message’s id (either direction)' }) });
const headers = Type.Object({
  'idempotency-key': Type.Optional(
    Type.String({ maxLength: 255, description: 'The same key and request within 24 h returns the first answer' }),
  ),
});
const answer = { 200: CodeEnvelope(MessageSchema), ...errorResponses(400, 401, 403, 404, 409) };

const ReactionBody = validatedByHandler(
  Type.Object(
    { emoji: Type.String({ description: 'Exactly one emoji; `""` takes the device’s reaction away' }) },
    { examples: [{ emoji: '👍' }, { emoji: '' }] },
  ),
);
const EditBody = validatedByHandler(
  Type.Object(
    { text: Type.String({ minLength: 1, maxLength: 4096, description: 'The new text (chat) or caption (media)' }) },
    { examples: [{ text: 'Corrected: the meeting is at 10:00' }] },
  ),
);
const ForwardBody = validatedByHandler(
  Type.Object(
    {
      receiver: Type.String({ description: 'A phone number, or a group id the device is in (as for POST /messages)' }),
    },
    { examples: [{ receiver: '6281234567890' }] },
  ),
);

function keyOf(request: FastifyRequest): string | undefined {
  const key = request.headers['idempotency-key'];
  if (key !== undefined && (typeof key !== 'string' || key.length === 0 || key.length > 255)) {
    throw new ApiError('VALIDATION_FAILED', { errors: { 'Idempotency-Key': ['1 to 255 characters'] } });
  }
  return key;
}

export const messageRoutes: FastifyPluginAsyncTypebox<{ messages: MessagesService; actions: MessageActions }> = async (
  app,
  { messages, actions },
) => {
  app.post(
    '/messages',
    {
      schema: {
        tags,
        summary: 'Send a message (accepted durably, sent in the background)',
        description:
          'Answers after the message is committed, with status `pending`. Optional header `Idempotency-Key`: the same key and body within 24 h returns the first answer and sends nothing again.',
        headers: Type.Object({ 'idempotency-key': Type.Optional(Type.String({ maxLength: 255 })) }),
        body: validatedByHandler(SendBodySchema),
        response: { 200: CodeEnvelope(MessageSchema), ...errorResponses(400, 401, 403, 404, 409) },
      },
    },
    async (request) => {
      const key = request.headers['idempotency-key'];
      if (key !== undefined && (typeof key !== 'string' || key.length === 0 || key.length > 255)) {
        throw new ApiError('VALIDATION_FAILED', { errors: { 'Idempotency-Key': ['1 to 255 characters'] } });
      }
      return messages.send(accountOf(request), request.body, key);
    },
  );

  app.get(
    '/messages/:id',
    {
      schema: {
        tags,
        summary: 'Look up a message and its status',
        params: Type.Object({ id: Type.String({ maxLength: 64 }) }),
        response: { 200: CodeEnvelope(MessageSchema), ...errorResponses(401, 404) },
      },
    },
    async (request) => ok('OK', await messages.get(accountOf(request), request.params.id)),
  );

  app.get(
    '/messages',
    {
      schema: {
        tags,
        summary: 'List messages, newest first',
        querystring: Type.Object({
          device: Type.Optional(Type.String({ maxLength: 32 })),
          status: Type.Optional(Type.String({ enum: ['pending', 'sent', 'delivered', 'failed'] })),
          direction: Type.Optional(Type.String({ enum: ['outgoing', 'incoming'] })),
          read: Type.Optional(
            Type.Boolean({
              description:
                'true: only messages that have a `read_at` (a read receipt came for them); false: only those that have none',
            }),
          ),
          limit: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
          cursor: Type.Optional(Type.String({ maxLength: 64 })),
        }),
        response: {
          200: CodeEnvelope(Type.Array(MessageSchema), { next_cursor: Nullable(Type.String()) }),
          ...errorResponses(400, 401),
        },
      },
    },
    async (request) => {
      const page = await messages.list(accountOf(request), request.query);
      return { code: 200, status: 200, message: 'OK', data: page.data, next_cursor: page.next_cursor };
    },
  );

  app.post(
    '/messages/:id/reaction',
    {
      schema: {
        tags,
        summary: 'React to a message, or take the reaction away',
        description:
          'Queued behind the device’s earlier messages and sent like them (not counted against the quota). 200 `Reaction sent` (`Reaction removed` for `""`) with the message, whose `reactions` show the device’s phone’s.',
        params,
        headers,
        body: ReactionBody,
        response: answer,
      },
    },
    async (request) => actions.react(accountOf(request), request.params.id, request.body, keyOf(request)),
  );

  app.patch(
    '/messages/:id',
    {
      schema: {
        tags,
        summary: 'Edit a sent text or caption (within 15 minutes)',
        description:
          'Our own `chat` text or media caption, once sent, within 15 minutes of `sent_at`; else 400 `Message cannot be edited`. 200 `Message edited` with the new text and `edited_at`.',
        params,
        headers,
        body: EditBody,
        response: answer,
      },
    },
    async (request) => actions.edit(accountOf(request), request.params.id, request.body, keyOf(request)),
  );

  app.delete(
    '/messages/:id',
    {
      schema: {
        tags,
        summary: 'Cancel a queued message, or delete a sent one for everyone (within 48 hours)',
        description:
          'Still `pending` and not being sent: cancelled (`failed`, `failed_reason: "cancelled"`, its quota unit back; 200 `Message cancelled`). `sent`/`delivered` within 48 h of `sent_at`: deleted for everyone (200 `Message deleted`, `deleted_at`). Else 400 `Message cannot be deleted`.',
        params,
        headers,
        response: answer,
      },
    },
    async (request) => actions.remove(accountOf(request), request.params.id, keyOf(request)),
  );

  app.post(
    '/messages/:id/read',
    {
      schema: {
        tags,
        summary: 'Mark a received message, and every earlier unread one of its chat, read',
        description: 'Read receipts go to the network through the device’s queue. 200 `Message read`.',
        params,
        headers,
        body: NoFieldsBody,
        response: answer,
      },
    },
    async (request) => actions.read(accountOf(request), request.params.id, keyOf(request)),
  );

  app.post(
    '/messages/:id/forward',
    {
      schema: {
        tags,
        summary: 'Forward a message to another receiver',
        description:
          'A new message with the stored content, counted and sent like any other, shown as forwarded (`params.forwarded: true`). Ours (media fetched again from its URL), or one received: a text, location, contact cards, poll, or media (image, video, audio, file, sticker) sent from the gateway’s store, the new message naming it by the gateway’s own URL and `params.forwarded_from`. Received media not `stored` (pending, failed, too_large, expired) and other received kinds: 400 `Message cannot be forwarded`, `error` saying why. Answers as POST /messages does, with the new message.',
        params,
        headers,
        body: ForwardBody,
        response: answer,
      },
    },
    async (request) => actions.forward(accountOf(request), request.params.id, request.body, keyOf(request)),
  );
};
