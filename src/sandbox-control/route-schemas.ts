/**
 * The request shapes of the sandbox control API (routes.ts): phones, their settings, group changes, calls and seeded
 * history.
 *
 * Owns: these schemas only.
 * Must never: hold behaviour (routes.ts and service.ts do).
 */
import { Type } from '@sinclair/typebox';
import { PHONE_PATTERN } from '../phone-number.js';

export const Phone = Type.String({
  pattern: '^[1-9][0-9]{6,14}$',
  description: 'Digits only, country code first',
  examples: ['6281234567890'],
});
export const PhoneParams = Type.Object({ phone: Type.String({ maxLength: 32 }) });

export const PhoneSettings = Type.Object({
  phone: Phone,
  name: Type.Optional(Type.String({ maxLength: 100 })),
  registered: Type.Optional(Type.Boolean()),
  privacy: Type.Optional(Type.Union([Type.Literal('everyone'), Type.Literal('nobody')])),
  online: Type.Optional(Type.Boolean()),
  auto_read: Type.Optional(Type.Boolean()),
  about: Type.Optional(Type.String({ maxLength: 139, description: 'Shown as the contact’s `about`' })),
  picture_url: Type.Optional(
    Type.Union([Type.String({ maxLength: 2048 }), Type.Null()], {
      description: 'Shown as the contact’s `profile_picture_url`; a change raises `contact.updated`',
    }),
  ),
  is_business: Type.Optional(Type.Boolean()),
});

export const GroupChangeBody = Type.Object({
  group_id: Type.String({ maxLength: 64, description: 'The group’s network id (`…@g.us`)' }),
  subject: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  description: Type.Optional(Type.String({ minLength: 1, maxLength: 2048 })),
  picture_url: Type.Optional(Type.String({ minLength: 1, maxLength: 2048 })),
  action: Type.Optional(Type.Union([Type.Literal('remove'), Type.Literal('promote'), Type.Literal('demote')])),
  participants: Type.Optional(Type.Array(Phone, { minItems: 1, maxItems: 1024 })),
});

export const Anything = Type.Object({}, { additionalProperties: true });

/** `PATCH /sandbox/phones/{phone}/chats/{chat}`: the fields as `PATCH /chats/{chat}` takes them (chats/settings.ts). */
export const PhoneChatParams = Type.Object({
  phone: Type.String({ maxLength: 32 }),
  chat: Type.String({
    maxLength: 64,
    description: 'The chat: a phone number, or a group’s network id (`…@g.us`)',
    examples: ['6281234567891', '120363012345678901@g.us'],
  }),
});
export const PhoneChatBody = Type.Object({
  archived: Type.Optional(
    Type.Unknown({ description: 'true: archive the chat; false: unarchive it', examples: [true] }),
  ),
  pinned: Type.Optional(Type.Unknown({ description: 'true: pin the chat; false: unpin it', examples: [true] })),
  muted_until: Type.Optional(
    Type.Unknown({
      description: 'Muted until then (ISO 8601, future); null: unmute',
      examples: ['2030-01-01T00:00:00Z'],
    }),
  ),
});
export const PhoneChatSettings = Type.Object({
  chat: Type.String(),
  archived: Type.Boolean(),
  pinned: Type.Boolean(),
  muted_until: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  last_message_id: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  changed_at: Type.Optional(Type.String({ format: 'date-time' })),
});

/** `POST /sandbox/phones/{phone}/calls`. */
export const PhoneCallBody = Type.Object({
  to: Type.String({
    pattern: PHONE_PATTERN.source,
    description: 'The device’s number',
    examples: ['6281234567890'],
  }),
  video: Type.Optional(Type.Boolean({ description: 'A video call' })),
  group_id: Type.Optional(
    Type.String({
      maxLength: 64,
      description: 'A group call in this group (its network id, …@g.us)',
      examples: ['120363012345678901@g.us'],
    }),
  ),
});

/** `POST /sandbox/phones/{phone}/history`. */
export const SeedHistoryBody = Type.Object({
  to: Type.String({
    pattern: PHONE_PATTERN.source,
    description: 'The number that will pair (the device’s number)',
    examples: ['6281234567890'],
  }),
  messages: Type.Array(
    Type.Object({
      text: Type.String({ minLength: 1, maxLength: 4096 }),
      from_me: Type.Optional(
        Type.Boolean({ description: 'True: `to` wrote it to the phone; false (default): the phone wrote it' }),
      ),
      at: Type.Optional(Type.String({ format: 'date-time', description: 'When it was sent; now when absent' })),
    }),
    { minItems: 1, maxItems: 1000 },
  ),
});
