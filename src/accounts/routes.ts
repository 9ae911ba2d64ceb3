/**
 * HTTP routes of token management (docs/internals.md, Accounts and tokens): list, create, revoke.
 *
 * Owns: paths, schemas and status codes. The secret appears in exactly one
 * answer: the 201 of its creation.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { iso } from '../clock.js';
import { accountOf } from '../http/auth.js';
import { ApiError } from '../errors.js';
import { CodeEnvelope, IdParams, NameString, Nullable, errorResponses } from '../http/schemas.js';
import type { TokenRow } from './repository.js';
import type { AccountsService } from './service.js';

const TokenSchema = Type.Object(
  {
    id: Type.Integer(),
    name: Type.String(),
    prefix: Type.String({ description: 'The first characters of the secret' }),
    created_at: Type.String({ format: 'date-time' }),
    last_used_at: Nullable(Type.String({ format: 'date-time' })),
  },
  { title: 'ApiToken' },
);

const present = (row: TokenRow) => ({
  id: row.id,
  name: row.name,
  prefix: row.prefix,
  created_at: iso(row.created_at),
  last_used_at: row.last_used_at === null ? null : iso(row.last_used_at),
});

const tags = ['Tokens'];

export const tokenRoutes: FastifyPluginAsyncTypebox<{ accounts: AccountsService }> = async (app, { accounts }) => {
  app.get(
    '/tokens',
    {
      schema: {
        tags,
        summary: 'List API tokens (never their secrets)',
        response: { 200: CodeEnvelope(Type.Array(TokenSchema)), ...errorResponses(401) },
      },
    },
    async (request) => {
      const rows = await accounts.listTokens(accountOf(request));
      return { code: 200, status: 200, message: 'OK', data: rows.map(present) };
    },
  );

  app.post(
    '/tokens',
    {
      schema: {
        tags,
        summary: 'Create an API token; the secret is in data.token, shown this once',
        body: Type.Object({ name: NameString(100) }),
        response: {
          201: CodeEnvelope(Type.Object({ ...TokenSchema.properties, token: Type.String() })),
          ...errorResponses(400, 401),
        },
      },
    },
    async (request, reply) => {
      const created = await accounts.createToken(accountOf(request), request.body.name);
      return reply.code(201).send({
        code: 201,
        status: 201,
        message: 'Token created',
        data: { ...present(created), token: created.token },
      });
    },
  );

  app.delete(
    '/tokens/:id',
    {
      schema: {
        tags,
        summary: 'Revoke an API token',
        description:
          'Revoking the token that makes the request locks this client out, so it needs `?confirm=true` (400 otherwise).',
        params: IdParams,
        querystring: Type.Object({
          confirm: Type.Optional(Type.Boolean({ description: 'Required to revoke the token making this request' })),
        }),
        response: { 200: CodeEnvelope(Type.Object({ id: Type.Integer() })), ...errorResponses(400, 401, 404) },
      },
      config: { fieldErrors: { id: 'TOKEN_NOT_FOUND' } },
    },
    async (request) => {
      if (request.params.id === request.auth.tokenId && request.query.confirm !== true) {
        throw new ApiError('CONFIRMATION_REQUIRED', {
          error: 'this is the token making the request: revoking it locks this client out; repeat with ?confirm=true',
        });
      }
      const revoked = await accounts.revokeToken(accountOf(request), request.params.id);
      if (!revoked) throw new ApiError('TOKEN_NOT_FOUND');
      return { code: 200, status: 200, message: 'Token revoked', data: { id: request.params.id } };
    },
  );
};
