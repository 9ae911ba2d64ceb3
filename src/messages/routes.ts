/**
 * HTTP routes of messages (spec 4.5; docs/internals.md, Sending): send, get one, list.
 *
 * Owns: paths, schemas, status codes and the Idempotency-Key header. The body
 * of `POST /messages` is documented with the message schemas
 * (src/messages/schemas.ts) and validated by the service against the same
 * schemas, so that every mistake gets the contract's own message.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { accountOf } from '../http/auth.js';
import { ApiError } from '../errors.js';
import { CodeEnvelope, Nullable, errorResponses } from '../http/schemas.js';
import { validatedByHandler } from '../http/validation.js';
import { MessageSchema } from './present.js';
import { SendBodySchema } from './schemas.js';
import type { MessagesService } from './service.js';

const tags = ['Messages'];

export const messageRoutes: FastifyPluginAsyncTypebox<{ messages: MessagesService }> = async (app, { messages }) => {
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
    async (request) => ({
      code: 200,
      status: 200,
      message: 'OK',
      data: await messages.get(accountOf(request), request.params.id),
    }),
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
};
