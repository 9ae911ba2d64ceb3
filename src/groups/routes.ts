/**
 * HTTP routes of groups (spec 4.7; docs/internals.md, Groups): list, get, create, update,
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
import { ApiError } from '../errors.js';
import { CodeEnvelope, NameString, PageMeta, PageQuery, errorResponses } from '../http/schemas.js';
import { validatedByHandler } from '../http/validation.js';
import { MessageSchema } from '../messages/present.js';
import { GroupSendBodySchema } from '../messages/schemas.js';
import { MAX_PARTICIPANTS_PER_REQUEST } from './limits.js';
import { ActingDevice, GroupParams, GroupRef, bodyDevice, notFoundById } from './route-schemas.js';
import { DISAPPEARING_DURATIONS, type DisappearingDuration } from './settings.js';
import type { MembersService } from './members.js';
import { CreatedGroupSchema, GroupDetailSchema, GroupSchema, MembersAddResultSchema } from './present.js';
import type { GroupsService } from './service.js';

export interface GroupRoutesOptions {
  readonly groups: GroupsService;
  readonly members: MembersService;
}

const tags = ['Groups'];

const ListQuery = Type.Object({
  ...PageQuery.properties,
  device: Type.Optional(Type.String({ maxLength: 32, description: 'Only the groups of the device with this number' })),
});

const CreateBody = Type.Object({
  device: Type.String({
    pattern: '^[1-9][0-9]{6,14}$',
    description: 'The number of the device that creates the group',
    examples: ['6281234567890'],
  }),
  name: NameString(100, { description: 'The group’s subject' }),
  participants: Type.Array(Type.String({ maxLength: 32, examples: ['6281234567891'] }), {
    maxItems: 1023,
    description: 'Numbers to add; the device becomes superadmin. Numbers the network refuses are left out.',
  }),
});

const DetailQuery = Type.Object({ device: Type.Optional(ActingDevice) });

const UpdateBody = Type.Object({
  device: Type.Optional(ActingDevice),
  subject: Type.Optional(NameString(100)),
  description: Type.Optional(Type.String({ maxLength: 2048, description: 'An empty string clears it' })),
  permissions: Type.Optional(
    Type.Object(
      {
        only_admins_can_send: Type.Optional(Type.Boolean({ description: 'Only admins may post' })),
        only_admins_can_edit: Type.Optional(
          Type.Boolean({ description: 'Only admins may change the subject, description and disappearing messages' }),
        ),
      },
      { description: 'Who may do what; only an admin may change these' },
    ),
  ),
  disappearing_messages: Type.Optional(
    Type.Object(
      {
        enabled: Type.Boolean(),
        duration: Type.Optional(
          Type.Unsafe<DisappearingDuration>({
            type: 'string',
            enum: Object.keys(DISAPPEARING_DURATIONS),
            description: 'Required when enabled is true',
          }),
        ),
      },
      { description: 'New messages disappear after the duration' },
    ),
  ),
});

const MembersAddParams = Type.Object({ group_id: GroupRef });

const MembersAddBody = Type.Object({
  device: Type.Optional(ActingDevice),
  participants: Type.Optional(
    Type.Unknown({
      examples: [['6281234567891', '6281234567892']],
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
        params: GroupParams,
        querystring: DetailQuery,
        response: { 200: CodeEnvelope(GroupDetailSchema), ...errorResponses(400, 401, 404) },
      },
      config: { fieldErrors: notFoundById },
    },
    async (request) => {
      const account = accountOf(request);
      const id = await groups.resolve(account, request.params.id, request.query.device);
      return { code: 200, status: 200, message: 'Group retrieved successfully', data: await groups.get(account, id) };
    },
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
        summary: 'Change a group’s subject, description, permissions or disappearing messages',
        description: [
          'Carried out on the network, in this order: subject, description, disappearing messages, only_admins_can_edit, only_admins_can_send.',
          'The device must be allowed to make the changes: nothing allowed is 403 `Access denied`.',
          'The network stops at a change it refuses: 400 `Group setting refused`, `errors` naming the field and `error` saying what was changed before it.',
        ].join(' '),
        params: GroupParams,
        body: UpdateBody,
        response: { 200: CodeEnvelope(GroupDetailSchema), ...errorResponses(400, 401, 403, 404) },
      },
      config: { fieldErrors: notFoundById },
    },
    async (request) => {
      const account = accountOf(request);
      const id = await groups.resolve(account, request.params.id, request.body.device);
      return { code: 200, status: 200, message: 'Group updated', data: await groups.update(account, id, request.body) };
    },
  );

  app.post(
    '/groups/:id/send',
    {
      schema: {
        tags,
        summary: 'Send a message to a group (the `/messages` body without `receiver`)',
        description:
          '`device` may be left out: the group’s device sends. Accepted durably like `POST /messages`; the message’s `receiver` is the network’s group id.',
        params: GroupParams,
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
      const account = accountOf(request);
      const id = await groups.resolve(account, request.params.id, bodyDevice(body));
      return groups.send(account, id, request.body, key);
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
      const account = accountOf(request);
      const id = await groups.resolve(account, request.params.group_id, request.body?.device);
      const answer = await members.add(account, id, request.body);
      return { code: 200, status: 200, ...answer };
    },
  );
};
