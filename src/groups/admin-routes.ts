/**
 * HTTP routes of group administration (DECISIONS 16): remove, promote and demote members, the invite link (get,
 * revoke), join by link or code, leave.
 *
 * Owns: paths, schemas, status codes and answer messages of those routes.
 * Must never: decide a rule (that is admin.ts) or touch SQL.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { accountOf } from '../http/auth.js';
import { CodeEnvelope, errorResponses } from '../http/schemas.js';
import type { ParticipantAction } from '../network/network.js';
import type { GroupAdminService } from './admin.js';
import { INVITE_LINK_PREFIX } from './admin.js';
import { PICTURE_MAX_BYTES } from '../contacts/picture.js';
import { MAX_PARTICIPANTS_PER_REQUEST } from './limits.js';
import { GroupDetailSchema } from './present.js';
import { ActingDevice, GroupParams, bodyDevice, notFoundById } from './route-schemas.js';
import type { GroupsService } from './service.js';

export interface GroupAdminRoutesOptions {
  readonly groups: GroupsService;
  readonly admin: GroupAdminService;
}

const tags = ['Groups'];

const ParticipantsBody = Type.Object({
  device: Type.Optional(ActingDevice),
  participants: Type.Optional(
    Type.Unknown({
      examples: [['6281234567891']],
      description: `Array of 1 to ${MAX_PARTICIPANTS_PER_REQUEST} phone numbers (digits only, country code first, no +). Malformed ones fail as INVALID_NUMBER; duplicates count once.`,
    }),
  ),
});

const ParticipantsChangeSchema = Type.Object({
  succeeded: Type.Array(Type.String(), { description: 'The numbers changed', examples: [['6281234567891']] }),
  failed: Type.Array(
    Type.Object({
      phone: Type.String(),
      error_code: Type.Union(
        [Type.Literal('NOT_A_MEMBER'), Type.Literal('INVALID_NUMBER'), Type.Literal('FORBIDDEN')],
        {
          description: '`FORBIDDEN`: the group’s creator cannot be removed or demoted',
        },
      ),
    }),
  ),
});

const DeviceBody = Type.Object({ device: Type.Optional(ActingDevice) });
const DeviceQuery = Type.Object({ device: Type.Optional(ActingDevice) });
const InviteLinkSchema = Type.Object({
  invite_link: Type.String({ examples: [`${INVITE_LINK_PREFIX}Fb3QpX8d2kL1mN0zYtR7aB`] }),
});

const JoinBody = Type.Object({
  device: Type.Optional(
    Type.Unknown({ description: 'The number of the device that joins', examples: ['6281234567890'] }),
  ),
  invite: Type.Optional(
    Type.Unknown({
      description: `An invite link (\`${INVITE_LINK_PREFIX}<code>\`) or its code`,
      examples: [`${INVITE_LINK_PREFIX}Fb3QpX8d2kL1mN0zYtR7aB`],
    }),
  ),
});

const PictureBody = Type.Object({
  device: Type.Optional(ActingDevice),
  url: Type.Optional(
    Type.Unknown({
      description: 'The http(s) URL of a JPEG or PNG image',
      examples: ['https://example.com/images/team.jpg'],
    }),
  ),
});

const CHANGES: Array<{ action: ParticipantAction; summary: string }> = [
  { action: 'remove', summary: 'Remove members from a group' },
  { action: 'promote', summary: 'Make members administrators of a group' },
  { action: 'demote', summary: 'Make administrators plain members again' },
];

export const groupAdminRoutes: FastifyPluginAsyncTypebox<GroupAdminRoutesOptions> = async (app, { groups, admin }) => {
  for (const { action, summary } of CHANGES) {
    app.post(
      `/groups/:id/members/${action}`,
      {
        schema: {
          tags,
          summary,
          description: [
            'The group’s device must be an administrator (403 `Access denied`).',
            `1 to ${MAX_PARTICIPANTS_PER_REQUEST} participants (400 \`Validation failed\`).`,
            'One outcome per participant: `succeeded`, or `failed` with `NOT_A_MEMBER`, `INVALID_NUMBER` or `FORBIDDEN` (the group’s creator).',
            `Records \`group.participants_${action === 'remove' ? 'removed' : `${action}d`}\` when any succeeded.`,
          ].join(' '),
          params: GroupParams,
          body: ParticipantsBody,
          response: { 200: CodeEnvelope(ParticipantsChangeSchema), ...errorResponses(400, 401, 403, 404) },
        },
        config: { fieldErrors: notFoundById },
      },
      async (request) => {
        const account = accountOf(request);
        const id = await groups.resolve(account, request.params.id, bodyDevice(request.body));
        const answer = await admin.changeMembers(account, id, action, request.body);
        return { code: 200, status: 200, ...answer };
      },
    );
  }

  app.get(
    '/groups/:id/invite-link',
    {
      schema: {
        tags,
        summary: 'The group’s invite link (an administrator’s to read)',
        params: GroupParams,
        querystring: DeviceQuery,
        response: { 200: CodeEnvelope(InviteLinkSchema), ...errorResponses(400, 401, 403, 404) },
      },
      config: { fieldErrors: notFoundById },
    },
    async (request) => {
      const account = accountOf(request);
      const id = await groups.resolve(account, request.params.id, request.query.device);
      const data = await admin.inviteLink(account, id, false);
      return { code: 200, status: 200, message: 'Invite link retrieved', data };
    },
  );

  app.post(
    '/groups/:id/invite-link/revoke',
    {
      schema: {
        tags,
        summary: 'Revoke the group’s invite link and answer the new one',
        params: GroupParams,
        body: Type.Optional(DeviceBody),
        response: { 200: CodeEnvelope(InviteLinkSchema), ...errorResponses(400, 401, 403, 404) },
      },
      config: { fieldErrors: notFoundById },
    },
    async (request) => {
      const account = accountOf(request);
      const id = await groups.resolve(account, request.params.id, bodyDevice(request.body));
      const data = await admin.inviteLink(account, id, true);
      return { code: 200, status: 200, message: 'Invite link revoked', data };
    },
  );

  app.post(
    '/groups/join',
    {
      schema: {
        tags,
        summary: 'Join a group by its invite link or code',
        description:
          'An invite no group has (unknown or revoked) is 404 `Group not found`. Records `group.joined`. Answers the group.',
        body: JoinBody,
        response: { 200: CodeEnvelope(GroupDetailSchema), ...errorResponses(400, 401, 404) },
      },
    },
    async (request) => {
      const data = await admin.join(accountOf(request), request.body);
      return { code: 200, status: 200, message: 'Group joined', data };
    },
  );

  app.post(
    '/groups/:id/leave',
    {
      schema: {
        tags,
        summary: 'The device leaves the group; the group leaves the list',
        description: 'Records `group.left`.',
        params: GroupParams,
        body: Type.Optional(DeviceBody),
        response: { 200: CodeEnvelope(Type.Null()), ...errorResponses(400, 401, 404) },
      },
      config: { fieldErrors: notFoundById },
    },
    async (request) => {
      const account = accountOf(request);
      const id = await groups.resolve(account, request.params.id, bodyDevice(request.body));
      await admin.leave(account, id);
      return { code: 200, status: 200, message: 'Left the group', data: null };
    },
  );

  app.put(
    '/groups/:id/picture',
    {
      schema: {
        tags,
        summary: 'Set the group’s picture from an image URL',
        description: [
          'The group’s device must be an administrator (403 `Access denied`).',
          `The picture is fetched as an image message’s is (the same address rules, up to ${PICTURE_MAX_BYTES / 1024 / 1024} MB) and must be JPEG or PNG (400 \`Unsupported file format\`).`,
          'Records `group.updated` with `changes: {picture: "changed"}`. Answers the group.',
        ].join(' '),
        params: GroupParams,
        body: PictureBody,
        response: { 200: CodeEnvelope(GroupDetailSchema), ...errorResponses(400, 401, 403, 404) },
      },
      config: { fieldErrors: notFoundById },
    },
    async (request) => {
      const account = accountOf(request);
      const id = await groups.resolve(account, request.params.id, bodyDevice(request.body));
      const data = await admin.setPicture(account, id, request.body);
      return { code: 200, status: 200, message: 'Group picture updated', data };
    },
  );
};
