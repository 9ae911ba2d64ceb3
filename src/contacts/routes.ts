/**
 * HTTP route of contact checking (docs/internals.md, Groups): `POST /contacts/check`.
 *
 * Owns: the path, schema and status codes. Must never: decide a rule (that
 * is the service's) or touch the network.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { accountOf } from '../http/auth.js';
import { CodeEnvelope, errorResponses } from '../http/schemas.js';
import type { ContactsService } from './service.js';

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

export const contactRoutes: FastifyPluginAsyncTypebox<{ contacts: ContactsService }> = async (app, { contacts }) => {
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
