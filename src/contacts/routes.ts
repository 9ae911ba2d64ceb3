/**
 * HTTP routes of contacts and the own profile: `POST /contacts/check` (docs/internals.md, Groups); the contact
 * list, one contact, block, unblock and the blocked list; `GET|PUT /devices/{id}/profile` (docs/api.md, Contacts
 * and Profile).
 *
 * Owns: the path, schema and status codes. Must never: decide a rule (that
 * is the service's) or touch the network.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { accountOf } from '../http/auth.js';
import { ok } from '../http/envelope.js';
import { CodeEnvelope, errorResponses } from '../http/schemas.js';
import { Nullable } from '../shapes.js';
import type { ContactBook } from './book.js';
import { PICTURE_MAX_BYTES } from './picture.js';
import { ABOUT_MAX, NAME_MAX, type ProfileService } from './profile.js';
import type { ContactsService } from './service.js';

export interface ContactRoutesOptions {
  readonly contacts: ContactsService;
  readonly book: ContactBook;
  readonly profile: ProfileService;
}

/** Numbers per request: enough for a page of an address book, small enough for one network round trip. */
export const MAX_PHONES_PER_CHECK = 100;

const CheckBody = Type.Object({
  device: Type.String({
    pattern: '^[1-9][0-9]{6,14}$',
    description: 'The number of the device that asks',
    examples: ['6281234567890'],
  }),
  phones: Type.Array(Type.String({ maxLength: 64, examples: ['6281234567891'] }), {
    minItems: 1,
    maxItems: MAX_PHONES_PER_CHECK,
    description: 'Numbers to check; one answer per distinct number, malformed ones answer `registered: false`',
  }),
});

const CheckResult = Type.Array(
  Type.Object({
    phone: Type.String(),
    registered: Type.Boolean(),
    is_on_whatsapp: Type.Boolean({
      description: 'Equals `registered`; the name Whatspie clients read (docs/internals.md, Whatspie compatibility)',
    }),
  }),
);

const DeviceRef = Type.String({
  maxLength: 32,
  description: 'The device: its phone number, or its id',
  examples: ['6281234567890'],
});
const DeviceQuery = Type.Object({ device: Type.Optional(DeviceRef) });
const DeviceBody = Type.Object({ device: Type.Optional(DeviceRef) });
const PhoneParams = Type.Object({
  phone: Type.String({ maxLength: 64, description: 'The contact’s number', examples: ['6281234567891'] }),
});

const ContactSchema = Type.Object(
  {
    phone: Type.String({ examples: ['6281234567891'] }),
    name: Nullable(Type.String({ description: 'The name the device’s user saved for the number', examples: ['Ana'] })),
    notify_name: Nullable(Type.String({ description: 'The name the number’s owner gave themselves' })),
    is_business: Type.Boolean(),
  },
  { title: 'Contact' },
);

const ContactProfileSchema = Type.Object(
  {
    phone: Type.String({ examples: ['6281234567891'] }),
    name: Nullable(Type.String({ examples: ['Ana'] })),
    about: Nullable(Type.String({ description: 'Null when the owner shows it to nobody', examples: ['Available'] })),
    profile_picture_url: Nullable(
      Type.String({
        description: 'Null when none is set or shown',
        examples: ['https://pps.whatsapp.net/v/t61/ana.jpg'],
      }),
    ),
    registered: Type.Boolean({ description: 'The number is on the network' }),
    blocked: Type.Boolean({ description: 'The device blocked the number' }),
  },
  { title: 'ContactProfile' },
);

const ProfileSchema = Type.Object(
  {
    name: Nullable(Type.String({ examples: ['Acme Support'] })),
    about: Nullable(Type.String({ examples: ['We answer 9-17 on weekdays'] })),
    picture_url: Nullable(Type.String({ examples: ['https://pps.whatsapp.net/v/t61/acme.jpg'] })),
  },
  { title: 'Profile' },
);

const ProfileBody = Type.Object({
  name: Type.Optional(Type.Unknown({ description: `1 to ${NAME_MAX} characters`, examples: ['Acme Support'] })),
  about: Type.Optional(Type.Unknown({ description: `Up to ${ABOUT_MAX} characters`, examples: ['We answer 9-17'] })),
  picture_url: Type.Optional(
    Type.Unknown({
      description: `The http(s) URL of a JPEG or PNG image, up to ${PICTURE_MAX_BYTES / 1024 / 1024} MB, fetched as an image message’s is`,
      examples: ['https://example.com/images/logo.png'],
    }),
  ),
});

const DeviceIdParams = Type.Object({ id: Type.Integer({ minimum: 1, maximum: 2 ** 53 - 1 }) });
const deviceNotFound = { id: 'DEVICE_NOT_FOUND' } as const;

const tags = ['Contacts'];

export const contactRoutes: FastifyPluginAsyncTypebox<ContactRoutesOptions> = async (
  app,
  { contacts, book, profile },
) => {
  app.get(
    '/contacts',
    {
      schema: {
        tags,
        summary: 'The device’s contacts',
        description:
          'Its address book on the network, then every number it exchanged messages with (outside groups), each once, ordered by number.',
        querystring: DeviceQuery,
        response: { 200: CodeEnvelope(Type.Array(ContactSchema)), ...errorResponses(400, 401, 404) },
      },
    },
    async (request) => ok('Contacts retrieved', await book.list(accountOf(request), request.query.device)),
  );

  app.get(
    '/contacts/blocked',
    {
      schema: {
        tags,
        summary: 'The numbers the device blocked',
        querystring: DeviceQuery,
        response: {
          200: CodeEnvelope(Type.Array(Type.Object({ phone: Type.String({ examples: ['6281234567891'] }) }))),
          ...errorResponses(400, 401, 404),
        },
      },
    },
    async (request) => ok('Blocked contacts retrieved', await book.blocked(accountOf(request), request.query.device)),
  );

  app.get(
    '/contacts/:phone',
    {
      schema: {
        tags,
        summary: 'One contact as the network shows it',
        description:
          'Read from the network, then answered from the gateway’s store for up to 24 hours; a block or unblock through the gateway shows at once, and a `contact.updated` means the next read asks the network again.',
        params: PhoneParams,
        querystring: DeviceQuery,
        response: { 200: CodeEnvelope(ContactProfileSchema), ...errorResponses(400, 401, 404) },
      },
    },
    async (request) =>
      ok('Contact retrieved', await book.get(accountOf(request), request.query.device, request.params.phone)),
  );

  for (const blocked of [true, false]) {
    app.post(
      `/contacts/:phone/${blocked ? 'block' : 'unblock'}`,
      {
        schema: {
          tags,
          summary: blocked ? 'Block a number' : 'Unblock a number',
          description: 'Done on the network; doing what is already so is no error.',
          params: PhoneParams,
          body: DeviceBody,
          response: {
            200: CodeEnvelope(Type.Object({ phone: Type.String(), blocked: Type.Boolean({ examples: [blocked] }) })),
            ...errorResponses(400, 401, 404),
          },
        },
      },
      async (request) =>
        ok(
          blocked ? 'Contact blocked' : 'Contact unblocked',
          await book.setBlocked(accountOf(request), request.body.device, request.params.phone, blocked),
        ),
    );
  }

  app.get(
    '/devices/:id/profile',
    {
      schema: {
        tags: ['Profile'],
        summary: 'The device’s own profile on the network',
        params: DeviceIdParams,
        response: { 200: CodeEnvelope(ProfileSchema), ...errorResponses(400, 401, 404) },
      },
      config: { fieldErrors: deviceNotFound },
    },
    async (request) => ok('Profile retrieved', await profile.get(accountOf(request), request.params.id)),
  );

  app.put(
    '/devices/:id/profile',
    {
      schema: {
        tags: ['Profile'],
        summary: 'Change the device’s name, about text or picture on the network',
        description:
          'At least one field. Every field is checked and the picture fetched before the network is asked, so a refused request changes nothing. Answers the profile as it now is.',
        params: DeviceIdParams,
        body: ProfileBody,
        response: { 200: CodeEnvelope(ProfileSchema), ...errorResponses(400, 401, 404) },
      },
      config: { fieldErrors: deviceNotFound },
    },
    async (request) => ok('Profile updated', await profile.update(accountOf(request), request.params.id, request.body)),
  );

  app.post(
    '/contacts/check',
    {
      schema: {
        tags: ['Contacts'],
        summary: 'Check which numbers are registered on the network',
        body: CheckBody,
        response: { 200: CodeEnvelope(CheckResult), ...errorResponses(400, 401, 403, 404) },
      },
      config: { fieldErrors: { device: 'INVALID_PHONE' } },
    },
    async (request) => ({
      code: 200,
      status: 200,
      message: 'Contacts checked',
      // `is_on_whatsapp` is the same answer under the name Whatspie's clients read.
      data: (await contacts.check(accountOf(request), request.body)).map((result) => ({
        ...result,
        is_on_whatsapp: result.registered,
      })),
    }),
  );
};
