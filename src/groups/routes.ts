/**
 * HTTP routes of groups (spec 4.7; DECISIONS 7): list, get, create, update,
 * send to a group, and add members.
 *
 * Owns: paths, schemas, status codes. Members add is documented at its spec
 * path under `/api` (`config.canonicalPrefix`); every route is still served
 * with and without the prefix.
 * Must never: decide a rule (that is service.ts and members.ts) or touch SQL.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { accountOf } from '../http/auth.js';
import { ApiError } from '../http/errors.js';
import { CodeEnvelope, IdParams, NameString, PageMeta, PageQuery, errorResponses } from '../http/schemas.js';
import { validatedByHandler } from '../http/validation.js';
import { MessageSchema } from '../messages/present.js';
import { GroupSendBodySchema } from '../messages/schemas.js';
import { MAX_PARTICIPANTS_PER_REQUEST } from './limits.js';
import type { MembersService } from './members.js';
import { CreatedGroupSchema, GroupDetailSchema, GroupSchema, MembersAddResultSchema } from './present.js';
import type { GroupsService } from './service.js';

export interface GroupRoutesOptions {
  readonly groups: GroupsService;
  readonly members: MembersService;
}

const tags = ['Groups'];
const notFoundById = { id: 'GROUP_NOT_FOUND' } as const;

const ListQuery = Type.Object({
  ...PageQuery.properties,
  device: Type.Optional(Type.String({ maxLength: 32, description: 'Only the groups of the device with this number' })),
});

const CreateBody = Type.Object({
  device: Type.String({
    pattern: '^[1-9][0-9]{6,14}$',
    description: 'The number of the device that creates the group',
  }),
  name: NameString(100, { description: 'The group’s subject' }),
  participants: Type.Array(Type.String({ maxLength: 32 }), {
    maxItems: 1023,
    description: 'Numbers to add; the device becomes superadmin. Numbers the network refuses are left out.',
  }),
});

const UpdateBody = Type.Object({
  subject: Type.Optional(NameString(100)),
  description: Type.Optional(Type.String({ maxLength: 2048, description: 'An empty string clears it' })),
});

const MembersAddParams = Type.Object({ group_id: Type.Integer({ minimum: 1, maximum: 2 ** 53 - 1 }) });

const MembersAddBody = Type.Object({
  participants: Type.Optional(
    Type.Unknown({
      description: `Array of 1 to ${MAX_PARTICIPANTS_PER_REQUEST} phone numbers (digits only, country code first, no +). Malformed ones fail as INVALID_NUMBER; duplicates count once.`,
    }),
  ),
});

export const groupRoutes: FastifyPluginAsyncTypebox<GroupRoutesOptions> = async (app, { groups, members }) => {
  app.get(
    '/groups',
    {
      schema: {
        tags,
        summary: 'List groups (synced from the network)',
        querystring: ListQuery,
        response: { 200: CodeEnvelope(Type.Array(GroupSchema), { meta: PageMeta }), ...errorResponses(400, 401, 404) },
      },
    },
    async (request) => {
      const { page, per_page, device } = request.query;
      const { data, total } = await groups.list(accountOf(request), { page, per_page, device });
      return {
        code: 200,
        status: 200,
        message: 'Groups retrieved successfully',
        data,
        meta: { page, per_page, total },
      };
    },
  );

  app.get(
    '/groups/:id',
    {
      schema: {
        tags,
        summary: 'Get a group with its participants and their admin roles',
        params: IdParams,
        response: { 200: CodeEnvelope(GroupDetailSchema), ...errorResponses(401, 404) },
      },
      config: { fieldErrors: notFoundById },
    },
    async (request) => ({
      code: 200,
      status: 200,
      message: 'Group retrieved successfully',
      data: await groups.get(accountOf(request), request.params.id),
    }),
  );

  app.post(
    '/groups',
    {
      schema: {
        tags,
        summary: 'Create a group on the network (the device becomes superadmin)',
        body: CreateBody,
        response: { 201: CodeEnvelope(CreatedGroupSchema), ...errorResponses(400, 401, 403, 404) },
      },
      config: { fieldErrors: { device: 'INVALID_PHONE' } },
    },
    async (request, reply) => {
      const data = await groups.create(accountOf(request), request.body);
      return reply.code(201).send({ code: 201, status: 201, message: 'Group created', data });
    },
  );

  app.put(
    '/groups/:id',
    {
      schema: {
        tags,
        summary: 'Change a group’s subject or description (the device must be an admin)',
        params: IdParams,
        body: UpdateBody,
        response: { 200: CodeEnvelope(GroupDetailSchema), ...errorResponses(400, 401, 403, 404) },
      },
      config: { fieldErrors: notFoundById },
    },
    async (request) => ({
      code: 200,
      status: 200,
      message: 'Group updated',
      data: await groups.update(accountOf(request), request.params.id, request.body),
    }),
  );

  app.post(
    '/groups/:id/send',
    {
      schema: {
        tags,
        summary: 'Send a message to a group (the `/messages` body without `receiver`)',
        description:
          '`device` may be left out: the group’s device sends. Accepted durably like `POST /messages`; the message’s `receiver` is the network’s group id.',
        params: IdParams,
        headers: Type.Object({ 'idempotency-key': Type.Optional(Type.String({ maxLength: 255 })) }),
        // Validated by the message service against the same schemas (src/messages/schemas.ts).
        body: validatedByHandler(GroupSendBodySchema),
        response: { 200: CodeEnvelope(MessageSchema), ...errorResponses(400, 401, 403, 404, 409) },
      },
      config: { fieldErrors: notFoundById },
    },
    async (request) => {
      // A client that sends a chat message through this URL would reach the whole group; refuse it instead.
      const body = request.body;
      if (typeof body === 'object' && body !== null && 'receiver' in body) {
        throw new ApiError('VALIDATION_FAILED', {
          errors: { receiver: ['a group send goes to the group; send to one chat with POST /messages'] },
        });
      }
      const key = request.headers['idempotency-key'];
      if (key !== undefined && (typeof key !== 'string' || key.length === 0 || key.length > 255)) {
        throw new ApiError('VALIDATION_FAILED', { errors: { 'Idempotency-Key': ['1 to 255 characters'] } });
      }
      return groups.send(accountOf(request), request.params.id, request.body, key);
    },
  );

  app.post(
    '/groups/:group_id/members/add',
    {
      schema: {
        tags,
        summary: 'Add members to a group, with an outcome per participant',
        description: [
          'The group’s device must be an administrator (403 `Access denied`).',
          `1 to ${MAX_PARTICIPANTS_PER_REQUEST} participants (400 \`Validation failed\`); a group already at 1024 members: 400 \`Group capacity exceeded\`.`,
          'Limits per group: 10 requests per minute and 500 additions per UTC day; past them 429 `Too many requests` with `Retry-After` (seconds), and participants past the day’s budget fail `RATE_LIMITED`.',
          'Also served at `/groups/{group_id}/members/add`.',
        ].join(' '),
        params: MembersAddParams,
        body: MembersAddBody,
        response: { 200: CodeEnvelope(MembersAddResultSchema), ...errorResponses(400, 401, 403, 404, 429) },
      },
      config: { fieldErrors: { group_id: 'GROUP_NOT_FOUND' }, canonicalPrefix: '/api' },
    },
    async (request) => {
      const answer = await members.add(accountOf(request), request.params.group_id, request.body);
      return { code: 200, status: 200, ...answer };
    },
  );
};
