/**
 * The sandbox control API (docs/internals.md, The network seam and the sandbox): scan a QR, manage virtual phones,
 * make phones send, read, react, edit and delete, create network groups, drop or log out a device.
 *
 * Owns: the `/sandbox/...` paths. Registered whenever the network has the
 * sandbox capability: when the sandbox is the network, and beside WhatsApp for
 * sandbox accounts (docs/internals.md, WhatsApp and sandbox accounts); every route needs a token like any other.
 * Must never: let an account act on another account's devices or messages
 * (service.ts holds those rules).
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type, type TSchema } from '@sinclair/typebox';
import { accountOf } from '../http/auth.js';
import { ApiError } from '../errors.js';
import { CodeEnvelope, IdParams, errorResponses } from '../http/schemas.js';
import type { MessageChange } from '../network/network.js';
import { SandboxControlError, type PhoneVote, type SandboxControl } from '../network/sandbox-control.js';
import type { AccountsService } from '../accounts/service.js';
import type { DevicesService } from '../devices/service.js';
import type { PairingService } from '../devices/pairing.js';
import type { Store } from '../store/store.js';
import { PhoneMessageBody } from './phone-message.js';
import {
  Anything,
  GroupChangeBody,
  Phone,
  PhoneCallBody,
  PhoneChatBody,
  PhoneChatParams,
  PhoneChatSettings,
  PhoneParams,
  PhoneSettings,
  SeedHistoryBody,
} from './route-schemas.js';
import { SandboxChanges } from './changes.js';
import { SandboxControlService } from './service.js';

const tags = ['Sandbox'];

/** Sandbox refusals carry their own status and message; anything else is a real failure. */
async function control<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof SandboxControlError) {
      throw new ApiError('SANDBOX_REJECTED', error.detail === undefined ? {} : { error: error.detail }, {
        statusCode: error.status,
        message: error.message,
      });
    }
    throw error;
  }
}

export interface SandboxRoutesOptions {
  readonly sandbox: SandboxControl;
  readonly store: Store;
  readonly accounts: AccountsService;
  readonly devices: DevicesService;
  readonly pairing: PairingService;
}

export const sandboxRoutes: FastifyPluginAsyncTypebox<SandboxRoutesOptions> = async (
  app,
  { sandbox, store, accounts, devices, pairing },
) => {
  // Every operation on phones goes through the account's rules of ownership (one shared world, many accounts).
  const owned = new SandboxControlService(
    store,
    sandbox,
    (accountId) => accounts.isSandbox(accountId),
    (deviceIds) => pairing.recorded(deviceIds),
  );
  const changes = new SandboxChanges(store, sandbox, (accountId) => accounts.isSandbox(accountId));
  // A phone's reaction, edit or delete (issue 26): `message_id` is the gateway's id, of either direction.
  const changeRoute = (
    path: 'reactions' | 'edits' | 'deletes' | 'votes',
    summary: string,
    fields: Record<string, TSchema>,
    toChange: (body: Record<string, unknown>) => MessageChange | PhoneVote,
    answer: string,
  ) =>
    app.post(
      `/sandbox/phones/:phone/${path}`,
      {
        schema: {
          tags,
          summary,
          params: PhoneParams,
          body: Type.Object({ message_id: Type.String({ minLength: 1, maxLength: 200 }), ...fields }),
          response: { 200: CodeEnvelope(Type.Null()), ...errorResponses(400, 401, 404) },
        },
      },
      async (request) => {
        const { message_id: messageId, ...rest } = request.body as { message_id: string } & Record<string, unknown>;
        await control(() => changes.change(accountOf(request), request.params.phone, messageId, toChange(rest)));
        return { code: 200, status: 200, message: answer, data: null };
      },
    );
  changeRoute(
    'reactions',
    'The phone reacts to a message (`emoji` "" takes its reaction away); the device gets `message.reaction`',
    { emoji: Type.String({ maxLength: 32, description: 'The emoji, or "" to take the reaction away' }) },
    (body) => ({ kind: 'reaction', emoji: body.emoji as string }),
    'Reaction sent',
  );
  changeRoute(
    'edits',
    'The phone edits a message it sent to a device; the device gets `message.edited`',
    { text: Type.String({ minLength: 1, maxLength: 4096 }) },
    (body) => ({ kind: 'edited', text: body.text as string }),
    'Message edited',
  );
  changeRoute(
    'deletes',
    'The phone deletes a message it sent to a device, for everyone; the device gets `message.deleted`',
    {},
    () => ({ kind: 'deleted' }),
    'Message deleted',
  );
  changeRoute(
    'votes',
    'The phone votes on a poll (ours, or one posted in a group it is in); the device gets `poll.vote`',
    {
      options: Type.Array(Type.String({ minLength: 1, maxLength: 100 }), {
        maxItems: 12,
        description:
          'The texts of the options chosen, at most the poll’s `selectable_count`; `[]` withdraws the vote. A later vote replaces the earlier one',
        examples: [['Yes']],
      }),
    },
    (body) => ({ kind: 'vote', selected: body.options as string[] }),
    'Vote sent',
  );
  app.get(
    '/sandbox/devices/:id/qr',
    {
      schema: {
        tags,
        summary: 'The text of the device’s current pairing QR, for scanning without a camera',
        description: 'Same attempt and same code as `GET /devices/{id}/qr`, as the text the image decodes to.',
        params: IdParams,
        response: { 200: CodeEnvelope(Type.Object({ qr: Type.String() })), ...errorResponses(401, 403, 404, 500) },
      },
      config: { fieldErrors: { id: 'DEVICE_NOT_FOUND' } },
    },
    async (request) => {
      // The device must be the caller's (404 otherwise) and on the sandbox (404 as well).
      await devices.get(accountOf(request), request.params.id);
      await owned.requireOnSandbox(accountOf(request));
      const answer = await pairing.qrText(accountOf(request), request.params.id);
      return {
        code: 200,
        status: 200,
        message: answer === null ? 'Device connected' : 'OK',
        data: { qr: answer ?? '' },
      };
    },
  );

  app.post(
    '/sandbox/scan',
    {
      schema: {
        tags,
        summary: 'A phone scans a pairing QR code (`qr` is the text the QR image decodes to)',
        body: Type.Object({
          qr: Type.String({
            minLength: 1,
            maxLength: 1000,
            description: 'The text the QR image decodes to (GET /devices/{id}/qr)',
            examples: ['sandbox-qr:2@k5vQ0LqX3m'],
          }),
          phone: Phone,
        }),
        response: { 200: CodeEnvelope(Type.Object({ device_phone: Type.String() })), ...errorResponses(400, 401) },
      },
      config: { fieldErrors: { phone: 'INVALID_PHONE' } },
    },
    async (request) => {
      const data = await control(() => owned.scan(accountOf(request), request.body.qr, request.body.phone));
      return { code: 200, status: 200, message: 'QR code scanned', data };
    },
  );

  app.post(
    '/sandbox/pair',
    {
      schema: {
        tags,
        summary: 'A phone’s user types a pairing code (from `POST /devices/{id}/pairing-code`) on the phone',
        body: Type.Object({
          pairing_code: Type.String({
            minLength: 1,
            maxLength: 20,
            description: 'The code POST /devices/{id}/pairing-code answered',
            examples: ['ABCD-EFGH'],
          }),
          phone: Phone,
        }),
        response: { 200: CodeEnvelope(Type.Object({ device_phone: Type.String() })), ...errorResponses(400, 401) },
      },
      config: { fieldErrors: { phone: 'INVALID_PHONE' } },
    },
    async (request) => {
      const data = await control(() => owned.pair(accountOf(request), request.body.pairing_code, request.body.phone));
      return { code: 200, status: 200, message: 'Pairing code accepted', data };
    },
  );

  app.post(
    '/sandbox/phones',
    {
      schema: {
        tags,
        summary: 'Create or update a virtual phone',
        body: PhoneSettings,
        response: { 200: CodeEnvelope(Anything), ...errorResponses(400, 401, 403) },
      },
      config: { fieldErrors: { phone: 'INVALID_PHONE' } },
    },
    async (request) => {
      const data = await control(() => owned.upsertPhone(accountOf(request), request.body));
      return { code: 200, status: 200, message: 'Phone saved', data };
    },
  );

  app.get(
    '/sandbox/phones/:phone',
    {
      schema: {
        tags,
        summary: 'A virtual phone with its inbox (every message it received)',
        params: PhoneParams,
        response: { 200: CodeEnvelope(Anything), ...errorResponses(401, 404) },
      },
    },
    async (request) => {
      const data = await control(() => owned.getPhone(accountOf(request), request.params.phone));
      return { code: 200, status: 200, message: 'OK', data };
    },
  );

  app.post(
    '/sandbox/phones/:phone/messages',
    {
      schema: {
        tags,
        summary:
          'The phone sends a message of any incoming kind to a device (it arrives as an incoming message): text, media, location, contacts, a poll, optionally as a reply',
        params: PhoneParams,
        body: PhoneMessageBody,
        response: { 200: CodeEnvelope(Type.Object({ message_id: Type.String() })), ...errorResponses(400, 401, 404) },
      },
      config: { fieldErrors: { to: 'INVALID_PHONE' } },
    },
    async (request) => {
      const { phone } = request.params;
      const data = await control(() => owned.sendFromPhone(accountOf(request), phone, request.body));
      return { code: 200, status: 200, message: 'Message sent', data };
    },
  );

  app.patch(
    '/sandbox/phones/:phone/chats/:chat',
    {
      schema: {
        tags,
        summary: 'The device’s own phone archives, pins or mutes a chat (the device hears it; `GET /chats` shows it)',
        description:
          '`{phone}` is the number one of your devices is paired to: the person holding that phone changes the chat there, and the device hears it as WhatsApp’s app-state sync tells every linked device (queued while it is offline). The fields follow `PATCH /chats/{chat}`. Answers the chat’s settings as the phone’s `chats` list shows them.',
        params: PhoneChatParams,
        body: PhoneChatBody,
        response: { 200: CodeEnvelope(PhoneChatSettings), ...errorResponses(400, 401, 404) },
      },
    },
    async (request) => {
      const { phone, chat } = request.params;
      const data = await control(() => owned.changeChatOnPhone(accountOf(request), phone, chat, request.body));
      return { code: 200, status: 200, message: 'Chat changed on the phone', data };
    },
  );

  app.post(
    '/sandbox/phones/:phone/calls',
    {
      schema: {
        tags,
        summary: 'The phone calls a device (it gets `call.incoming`, and rejects it when set to `reject_calls`)',
        description:
          'The device must be connected (409 `Device not connected`): a call rings only a device that is online. The phone’s `calls` list shows the call, `rejected` once the device rejected it.',
        params: PhoneParams,
        body: PhoneCallBody,
        response: {
          200: CodeEnvelope(
            Type.Object({
              id: Type.String(),
              to: Type.String(),
              video: Type.Boolean(),
              group_id: Type.Optional(Type.String()),
              status: Type.Union([Type.Literal('ringing'), Type.Literal('rejected')]),
              at: Type.String({ format: 'date-time' }),
            }),
          ),
          ...errorResponses(400, 401, 404, 409),
        },
      },
      config: { fieldErrors: { to: 'INVALID_PHONE' } },
    },
    async (request) => {
      const { phone } = request.params;
      const data = await control(() => owned.callFromPhone(accountOf(request), phone, request.body));
      return { code: 200, status: 200, message: 'Calling', data };
    },
  );

  app.post(
    '/sandbox/phones/:phone/history',
    {
      schema: {
        tags,
        summary: 'Seeds the phone’s earlier conversation with a number, offered as history when it pairs',
        description:
          'The messages join the history of the number `to` (oldest first by `at`): the next time `to` pairs one of your devices, the device is offered them with the texts its number sent to phones, and stores those sent within `GATEWAY_HISTORY_DAYS` days with `source: "history"`, then gets one `device.history_synced` (docs/api.md, History sync). Up to 1,000 messages a call, 20,000 kept per number.',
        params: PhoneParams,
        body: SeedHistoryBody,
        response: { 200: CodeEnvelope(Type.Object({ seeded: Type.Integer() })), ...errorResponses(400, 401, 404) },
      },
      config: { fieldErrors: { to: 'INVALID_PHONE' } },
    },
    async (request) => {
      const { phone } = request.params;
      const data = await control(() => owned.seedHistory(accountOf(request), phone, request.body));
      return { code: 200, status: 200, message: 'History seeded', data };
    },
  );

  app.post(
    '/sandbox/phones/:phone/read',
    {
      schema: {
        tags,
        summary: 'The phone reads a message it received (the sender gets a read receipt)',
        params: PhoneParams,
        body: Type.Object({ message_id: Type.String({ minLength: 1, maxLength: 200 }) }),
        response: { 200: CodeEnvelope(Type.Null()), ...errorResponses(400, 401, 404) },
      },
    },
    async (request) => {
      await control(() => owned.readMessage(accountOf(request), request.params.phone, request.body.message_id));
      return { code: 200, status: 200, message: 'Message read', data: null };
    },
  );

  app.post(
    '/sandbox/groups',
    {
      schema: {
        tags,
        summary: 'Create a group on the network; member devices see it after their next sync',
        body: Type.Object({
          name: Type.String({ minLength: 1, maxLength: 100 }),
          members: Type.Array(Type.Object({ phone: Phone, admin: Type.Optional(Type.Boolean()) }), {
            minItems: 1,
            maxItems: 1024,
          }),
        }),
        response: { 201: CodeEnvelope(Anything), ...errorResponses(400, 401, 403) },
      },
    },
    async (request, reply) => {
      const data = await control(() => owned.createGroup(accountOf(request), request.body.name, request.body.members));
      return reply.code(201).send({ code: 201, status: 201, message: 'Group created', data });
    },
  );

  app.post(
    '/sandbox/phones/:phone/group-changes',
    {
      schema: {
        tags,
        summary: 'A member phone changes a group: its subject, description or picture, or (an admin) its members',
        description:
          'Either `subject`/`description`/`picture_url`, or `action` with `participants`. Every member device is told who did it: they record `group.updated` or `group.participants_removed|promoted|demoted` with `by` the phone. 404 when the phone is not in the group; 400 `Not allowed` when it may not.',
        params: PhoneParams,
        body: GroupChangeBody,
        response: { 200: CodeEnvelope(Anything), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const data = await control(() => owned.changeGroup(accountOf(request), request.params.phone, request.body));
      return { code: 200, status: 200, message: 'Group changed', data };
    },
  );

  app.post(
    '/sandbox/devices/:id/disconnect',
    {
      schema: {
        tags,
        summary: 'Drop a device connection (it comes back by itself), or log it out from the phone',
        params: IdParams,
        body: Type.Optional(Type.Object({ logout: Type.Optional(Type.Boolean()) })),
        response: { 200: CodeEnvelope(Type.Null()), ...errorResponses(400, 401, 404) },
      },
      config: { fieldErrors: { id: 'DEVICE_NOT_FOUND' } },
    },
    async (request) => {
      const device = await devices.get(accountOf(request), request.params.id);
      await owned.requireOnSandbox(accountOf(request));
      const logout = request.body?.logout === true;
      await control(() => sandbox.disconnectDevice(device.id, { logout }));
      return {
        code: 200,
        status: 200,
        message: logout ? 'Device logged out from the phone' : 'Connection dropped',
        data: null,
      };
    },
  );
};
