/**
 * HTTP routes of the device API (spec 4.1-4.3; docs/internals.md, Devices and pairing).
 *
 * Owns: paths, schemas and status codes. Rules live in the service.
 */
import { WEBHOOK_FORMATS } from '../events/formats/index.js';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { iso } from '../clock.js';
import { accountOf } from '../http/auth.js';
import {
  DeviceEnvelope,
  IdParams,
  NameString,
  NoFieldsBody,
  CodeEnvelope,
  Nullable,
  PageMeta,
  PageQuery,
  errorResponses,
} from '../http/schemas.js';
import { PACKAGE_CODES } from './packages.js';
import { DeviceSchema, presentDevice } from './present.js';
import type { DevicesService } from './service.js';
import type { PairingService } from './pairing.js';
import type { DeviceNetworks } from './networks.js';
import { PresenceBody, TypingBody, type DevicePresence } from './presence.js';

export interface DeviceRoutesOptions {
  readonly devices: DevicesService;
  readonly pairing: PairingService;
  readonly serverName: string;
  /** Whether a node is up (the device's `server.status`); default: only this one. */
  readonly serverUp?: (name: string) => boolean;
  /** Which network a device is on (its `network`). */
  readonly networks: Pick<DeviceNetworks, 'ofDevice'>;
  /** Presence and typing (presence.ts). */
  readonly presence: DevicePresence;
}

const QrQuery = Type.Object({
  response_type: Type.String({ enum: ['url'], description: 'Only `url` (a PNG data URL) is supported' }),
});

const QrAnswer = Type.Union([
  DeviceEnvelope(
    Type.Object({
      qr: Type.String({ description: 'data:image/png;base64,...' }),
      expires_at: Type.Optional(
        Nullable(Type.String({ format: 'date-time', description: 'When this pairing attempt’s window closes' })),
      ),
    }),
  ),
  Type.Object({ code: Type.Literal(200), status: Type.Literal(200), message: Type.Literal('Device connected') }),
]);

const PairingCodeBody = Type.Object({
  phone: Type.String({
    pattern: '^[1-9][0-9]{6,14}$',
    description: 'The number of the phone that will type the code; digits only, country code first',
    examples: ['6281234567890'],
  }),
});

const PairingCodeAnswer = Type.Union([
  Type.Object({
    code: Type.Literal(200),
    status: Type.Literal(200),
    message: Type.Literal('Pairing code generated'),
    data: Type.Object({
      pairing_code: Type.String({ description: 'Eight characters as `ABCD-EFGH`, typed on the phone' }),
      phone: Type.String(),
    }),
  }),
  Type.Object({ code: Type.Literal(200), status: Type.Literal(200), message: Type.Literal('Device connected') }),
]);

const CreateDeviceBody = Type.Object({
  package: Type.String({ enum: PACKAGE_CODES, description: 'Package code (spec 2.2)' }),
  name: NameString(100),
  phone: Type.Optional(
    Nullable(
      Type.String({
        pattern: '^[1-9][0-9]{6,14}$',
        description: 'Only this number may pair the device',
        examples: ['6281234567899'],
      }),
    ),
  ),
});

// Only these fields can be changed here; any other (package, status, phone, ...) is refused by name, not ignored.
const UpdateDeviceBody = Type.Object(
  {
    name: Type.Optional(NameString(100)),
    webhook_url: Type.Optional(
      Nullable(
        Type.String({
          minLength: 1,
          maxLength: 2048,
          description: 'Absolute http(s) URL; null to stop deliveries',
          examples: ['https://example.com/webhooks/gateway'],
        }),
      ),
    ),
    webhook_format: Type.Optional(
      Type.String({
        enum: [...WEBHOOK_FORMATS],
        description:
          'How deliveries are written: `standard` (Standard Webhooks envelope, every event), `whatspie_v1` (incoming messages only, flat body) or `whatspie_v2` (`{type, data}`); all signed alike',
      }),
    ),
    webhook_reply: Type.Optional(
      Type.Boolean({
        description:
          'Reply by response for the `standard` format: a 2xx answer to `message.incoming` may carry replies to send (always on for the Whatspie formats)',
      }),
    ),
    send_interval_ms: Type.Optional(
      Nullable(
        Type.Integer({
          minimum: 0,
          maximum: 3_600_000,
          description: 'Minimum gap between two sends of this device; null for the gateway default',
        }),
      ),
    ),
    reject_calls: Type.Optional(
      Type.Boolean({
        description: 'Reject every incoming call on the network (each is still announced as `call.incoming`)',
      }),
    ),
    reject_calls_message: Type.Optional(
      Nullable(
        Type.String({
          maxLength: 4096,
          description: 'Sent to the caller after a rejected call, as a message of the device; null or "" for none',
          examples: ['Sorry, this number does not take calls. Please write to us here.'],
        }),
      ),
    ),
  },
  {
    additionalProperties: false,
    description:
      'The package is changed by an operator (`gateway devices package`); status, phone and quota are not set here.',
  },
);

const notFoundById = { id: 'DEVICE_NOT_FOUND' } as const;
const tags = ['Devices'];

export const deviceRoutes: FastifyPluginAsyncTypebox<DeviceRoutesOptions> = async (
  app,
  { devices, pairing, serverName, serverUp, networks, presence },
) => {
  const present = async (row: Parameters<typeof presentDevice>[0]) =>
    presentDevice(row, await networks.ofDevice(row), serverName, serverUp);

  app.post(
    '/devices',
    {
      schema: {
        tags,
        summary: 'Create a device',
        body: CreateDeviceBody,
        response: { 201: DeviceEnvelope(DeviceSchema), ...errorResponses(400, 401, 403) },
      },
      config: { fieldErrors: { package: 'INVALID_PACKAGE', phone: 'INVALID_PHONE' } },
    },
    async (request, reply) => {
      const row = await devices.create(accountOf(request), request.body);
      return reply.code(201).send({ code: 201, status: 201, message: 'Device created', data: await present(row) });
    },
  );

  app.get(
    '/devices',
    {
      schema: {
        tags,
        summary: 'List devices',
        querystring: PageQuery,
        response: { 200: DeviceEnvelope(Type.Array(DeviceSchema), { meta: PageMeta }), ...errorResponses(400, 401) },
      },
    },
    async (request) => {
      const { page, per_page } = request.query;
      const { rows, total } = await devices.list(accountOf(request), page, per_page);
      return {
        code: 200,
        status: 200,
        message: 'Devices retrieved successfully',
        data: await Promise.all(rows.map(present)),
        meta: { page, per_page, total },
      };
    },
  );

  app.get(
    '/devices/:id',
    {
      schema: {
        tags,
        summary: 'Get a device',
        params: IdParams,
        response: { 200: DeviceEnvelope(DeviceSchema), ...errorResponses(401, 404) },
      },
      config: { fieldErrors: notFoundById },
    },
    async (request) => {
      const row = await devices.get(accountOf(request), request.params.id);
      return { code: 200, status: 200, message: 'Device retrieved successfully', data: await present(row) };
    },
  );

  app.patch(
    '/devices/:id',
    {
      schema: {
        tags,
        summary: 'Change a device’s name, webhook URL, webhook format or reply by response',
        params: IdParams,
        body: UpdateDeviceBody,
        response: { 200: DeviceEnvelope(DeviceSchema), ...errorResponses(400, 401, 404) },
      },
      config: { fieldErrors: notFoundById },
    },
    async (request) => {
      const row = await devices.update(accountOf(request), request.params.id, request.body);
      return { code: 200, status: 200, message: 'Device updated', data: await present(row) };
    },
  );

  app.delete(
    '/devices/:id',
    {
      schema: {
        tags,
        summary: 'Delete a device (logs it out; its messages stay queryable)',
        params: IdParams,
        response: { 200: DeviceEnvelope(DeviceSchema), ...errorResponses(401, 404) },
      },
      config: { fieldErrors: notFoundById },
    },
    async (request) => {
      const row = await devices.delete(accountOf(request), request.params.id);
      return { code: 200, status: 200, message: 'Device deleted', data: await present(row) };
    },
  );

  app.get(
    '/devices/:id/qr',
    {
      schema: {
        tags,
        summary: 'Get the current pairing QR code (starts a pairing attempt when none runs)',
        description:
          'A paired, connected device answers `{code: 200, message: "Device connected"}` with no QR; a paired device that is offline answers 409 `Device offline, reconnecting` (it reconnects by itself, no QR needed). A pairing attempt ended while the request waits answers 404 `Device not found` (deleted), 403 `Device suspended` or 409 `Device logged out`. The network rotates the code; each call returns the current one.',
        params: IdParams,
        querystring: QrQuery,
        response: { 200: QrAnswer, ...errorResponses(400, 401, 403, 404, 409, 500) },
      },
      config: { fieldErrors: notFoundById },
    },
    async (request) => {
      const answer = await pairing.qr(accountOf(request), request.params.id);
      if (answer.kind === 'connected')
        return { code: 200 as const, status: 200 as const, message: 'Device connected' as const };
      const expires_at = answer.expiresAt === null ? null : iso(answer.expiresAt);
      return { code: 200, status: 200, message: 'QR code generated', data: { qr: answer.dataUrl, expires_at } };
    },
  );

  app.post(
    '/devices/:id/pairing-code',
    {
      schema: {
        tags,
        summary: 'Get a pairing code to type on the phone instead of scanning the QR (starts a pairing attempt)',
        description:
          'The user opens Linked devices → Link with phone number on the phone and types the code. The code is bound to `phone`; a device created for a number pairs only from that number. A paired device answers `{code: 200, status: 200, message: "Device connected"}`.',
        params: IdParams,
        body: PairingCodeBody,
        response: { 200: PairingCodeAnswer, ...errorResponses(400, 401, 403, 404, 500) },
      },
      config: { fieldErrors: { ...notFoundById, phone: 'INVALID_PHONE' } },
    },
    async (request) => {
      const { phone } = request.body;
      const code = await pairing.pairingCode(accountOf(request), request.params.id, phone);
      if (code === null) return { code: 200 as const, status: 200 as const, message: 'Device connected' as const };
      return {
        code: 200 as const,
        status: 200 as const,
        message: 'Pairing code generated' as const,
        data: { pairing_code: code, phone },
      };
    },
  );

  app.post(
    '/devices/:id/logout',
    {
      schema: {
        tags,
        summary: 'Log the device out of the network (it becomes UNPAIRED)',
        params: IdParams,
        body: NoFieldsBody,
        response: { 200: DeviceEnvelope(DeviceSchema), ...errorResponses(401, 404) },
      },
      config: { fieldErrors: notFoundById },
    },
    async (request) => {
      const row = await pairing.logout(accountOf(request), request.params.id);
      return { code: 200, status: 200, message: 'Device logged out', data: await present(row) };
    },
  );

  app.post(
    '/devices/:id/presence',
    {
      schema: {
        tags,
        summary: 'Show the device online (`available`) or offline (`unavailable`) on the network',
        params: IdParams,
        body: PresenceBody,
        response: { 200: CodeEnvelope(Type.Null()), ...errorResponses(400, 401, 404) },
      },
      config: { fieldErrors: notFoundById },
    },
    async (request) => {
      await presence.presence(accountOf(request), request.params.id, request.body);
      return { code: 200, status: 200, message: 'Presence sent', data: null };
    },
  );

  app.post(
    '/devices/:id/typing',
    {
      schema: {
        tags,
        summary: 'Show typing (`composing`), recording a voice note (`recording`) or stopped (`paused`) in a chat',
        params: IdParams,
        body: TypingBody,
        response: { 200: CodeEnvelope(Type.Null()), ...errorResponses(400, 401, 404) },
      },
      config: { fieldErrors: notFoundById },
    },
    async (request) => {
      await presence.typing(accountOf(request), request.params.id, request.body);
      return { code: 200, status: 200, message: 'Typing sent', data: null };
    },
  );

  app.post(
    '/devices/:id/restart',
    {
      schema: {
        tags,
        summary: 'Drop and re-open the device’s connection to the network',
        description:
          'A paired device reconnects from its stored session (`connected` is false until it is back); a running pairing attempt ends, and the next QR request starts a new one.',
        params: IdParams,
        body: NoFieldsBody,
        response: { 200: DeviceEnvelope(DeviceSchema), ...errorResponses(401, 403, 404) },
      },
      config: { fieldErrors: notFoundById },
    },
    async (request) => {
      const row = await pairing.restart(accountOf(request), request.params.id);
      return { code: 200, status: 200, message: 'Device restarting', data: await present(row) };
    },
  );
};
