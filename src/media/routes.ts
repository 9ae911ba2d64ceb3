/**
 * `GET /media/{media_id}` (docs/api.md, Media): incoming media, with the account's bearer token or a signed URL.
 *
 * Owns: the HTTP of it (reading the token or the signature, the range header, writing the stream). The rules are
 * serving.ts's. Must never: let a request without a valid token or signature see whether the media exists.
 */
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsync } from 'fastify';
import type { AccountsService } from '../accounts/service.js';
import { ApiError } from '../errors.js';
import { errorResponses } from '../http/schemas.js';
import type { MediaServing, MediaAccess } from './serving.js';

export interface MediaRouteOptions {
  readonly serving: MediaServing;
  readonly accounts: AccountsService;
}

export const mediaRoutes: FastifyPluginAsync<MediaRouteOptions> = async (app, { serving, accounts }) => {
  app.get<{ Params: { media_id: string }; Querystring: { expires?: string; signature?: string } }>(
    '/media/:media_id',
    {
      // Checked here: a signed URL needs no token.
      config: { public: true },
      schema: {
        tags: ['Messages'],
        summary: 'Download incoming media',
        description:
          'The media of an incoming message (its `file_url`): with the account’s bearer token, or without one while the URL’s `expires` and `signature` hold. Served with its content type and length; a `Range: bytes=…` request answers 206 with those bytes (416 outside them). 409 `Media not ready` while it is still downloading (after waiting a few seconds), 410 `Media expired` after `GATEWAY_INCOMING_MEDIA_RETENTION_DAYS`, 403 for a wrong or expired signature.',
        params: Type.Object({ media_id: Type.String({ minLength: 1, maxLength: 64 }) }),
        querystring: Type.Object({
          expires: Type.Optional(Type.String({ maxLength: 20, description: 'Unix seconds (signed URLs)' })),
          signature: Type.Optional(Type.String({ maxLength: 100, description: 'HMAC of the URL (signed URLs)' })),
        }),
        security: [{ bearer: [] }, {}],
        response: {
          200: Type.String({ format: 'binary', description: 'The media' }),
          206: Type.String({ format: 'binary', description: 'The requested range of the media' }),
          ...errorResponses(401, 403, 404, 409, 410, 416),
        },
      },
    },
    async (request, reply) => {
      const { expires, signature } = request.query;
      let access: MediaAccess;
      if (request.headers.authorization !== undefined) {
        const auth = await accounts.authenticate(request.headers.authorization);
        if (auth === null) throw new ApiError('UNAUTHORIZED');
        access = { accountId: auth.accountId };
      } else if (expires !== undefined && signature !== undefined) {
        access = { expires, signature };
      } else {
        throw new ApiError('UNAUTHORIZED');
      }
      const range = typeof request.headers.range === 'string' ? request.headers.range : undefined;
      const served = await serving.open(request.params.media_id, access, range, reply.raw);
      return reply.code(served.status).headers(served.headers).send(served.body);
    },
  );
};
