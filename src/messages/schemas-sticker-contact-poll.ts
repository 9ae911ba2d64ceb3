// Owns the params of the sticker, contact and poll messages (DECISIONS 15): their rules as schemas the
// validator compiles and the OpenAPI document shows, beside the other types' in src/messages/schemas.ts.
// Rules JSON Schema cannot say are annotations the validator implements (`x-distinct`: options differ;
// `x-at-most-count`: a poll's selectable count is at most its options). It must never hold logic.
import { Type, type Static } from '@sinclair/typebox';
import { CONTACT_LIMITS, POLL_LIMITS } from './limits.js';
import { CALL_NUMBER_RULE, MediaContainer, Text } from './schema-parts.js';

export const StickerParams = Type.Object({
  sticker: MediaContainer('INVALID_MEDIA_URL', 'sticker (WebP, up to 1 MB)'),
});

const Contact = Type.Object({
  name: Text({ max: CONTACT_LIMITS.name, required: true }, 'The name the card shows.'),
  phone: Type.String({
    'x-check': 'callNumber',
    description: 'The number on the card: country code first; a leading + is allowed',
    examples: ['6281234567890'],
    'x-messages': { '*': CALL_NUMBER_RULE },
  }),
  organization: Type.Optional(Text({ max: CONTACT_LIMITS.organization, required: false }, 'The company.')),
});

export const ContactParams = Type.Object({
  contacts: Type.Array(Contact, {
    minItems: 1,
    maxItems: CONTACT_LIMITS.contacts,
    description: `The contact cards (vCards), 1 to ${CONTACT_LIMITS.contacts}`,
    'x-messages': {
      minItems: 'must have at least 1 contact',
      maxItems: `must have at most ${CONTACT_LIMITS.contacts} contacts`,
      '*': 'must be an array of contacts',
    },
  }),
});

export const PollParams = Type.Object(
  {
    name: Text({ max: POLL_LIMITS.name, required: true }, 'The question.'),
    options: Type.Array(Text({ max: POLL_LIMITS.option, required: true }), {
      minItems: POLL_LIMITS.minOptions,
      maxItems: POLL_LIMITS.maxOptions,
      'x-distinct': true,
      description: `The answers, ${POLL_LIMITS.minOptions} to ${POLL_LIMITS.maxOptions}, each different`,
      'x-messages': {
        minItems: `must have at least ${POLL_LIMITS.minOptions} options`,
        maxItems: `must have at most ${POLL_LIMITS.maxOptions} options`,
        '*': 'must be an array of texts',
      },
    }),
    selectable_count: Type.Optional(
      Type.Integer({
        minimum: 1,
        description: 'How many answers one voter may pick: 1 (the default) up to the number of options',
        'x-messages': { '*': 'must be an integer of at least 1' },
      }),
    ),
  },
  { 'x-at-most-count': { field: 'selectable_count', of: 'options' } },
);

export type ContactParamsBody = Static<typeof ContactParams>;
export type PollParamsBody = Static<typeof PollParams>;
