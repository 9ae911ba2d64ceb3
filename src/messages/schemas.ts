// Owns the one definition of every message type's body (spec 2.3-2.5, 4.5, 8; docs/internals.md, Sending): a
// TypeBox schema per type that validation compiles (src/messages/checks.ts), that types the
// canonical body, and that the OpenAPI document shows for `POST /messages` and group sends (a
// oneOf keyed on `type`). Rules JSON Schema cannot say are named here as annotations the validator
// implements once: `x-text` (a text limit in user-perceived characters), `x-check` (URL, media
// type, file name and call-number forms), `x-unique` (row ids, button indexes), `x-max-total`
// (rows across sections), `x-one-of-fields` (one button kind), `x-distinct` (poll options), `x-at-most-count`
// (a poll's selectable count against its options). `x-code` names the contract's error
// for a malformed value and `x-messages` the words for a keyword. It must never hold logic: a rule
// changes here, once.
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { GROUP_JID_PATTERN, PHONE_PATTERN, PHONE_RULE } from '../shapes.js';
import { FILE_NAME_MAX } from './forms.js';
import {
  LIST_LIMITS,
  LOCATION_TEXT_MAX,
  MENTIONS_MAX,
  QUOTED_ID_MAX,
  TEMPLATE_LIMITS,
  TEXT_MAX,
  type ListLimits,
} from './limits.js';
import { GROUP_SEND_EXAMPLES, SEND_EXAMPLES } from './examples.js';
import { CALL_NUMBER_RULE, HttpUrl, MediaContainer, Phone, Text, plural } from './schema-parts.js';
import { ContactParams, PollParams, StickerParams } from './schemas-sticker-contact-poll.js';
import { MESSAGE_TYPES, type MessageType } from './message-types.js';

export { MESSAGE_TYPES, type MessageType } from './message-types.js';

export {
  CALL_NUMBER_RULE,
  HttpUrl,
  MediaContainer,
  PHONE_RULE,
  Phone,
  Text,
  plural,
  type CheckName,
  type CheckRule,
  type TextRule,
  type ViolationCode,
} from './schema-parts.js';

const Caption = Text({ max: TEXT_MAX, required: false, tooLong: 'MESSAGE_TOO_LONG' }, 'Shown under the media.');
const ViewOnce = Type.Boolean({ description: 'The recipient can open it once' });
const Mimetype = Type.String({
  'x-check': 'mimetype',
  description: 'Media type, such as video/mp4 (optional: taken from the bytes)',
});

// --- params of each type -------------------------------------------------------------------

export const ChatParams = Type.Object({
  text: Text({ max: TEXT_MAX, required: true, tooLong: 'MESSAGE_TOO_LONG' }, 'The text; *bold*, _italic_, ~strike~.'),
  link_preview: Type.Optional(
    Type.Boolean({
      description:
        'false: no preview of the first link in the text (default true: its title, description and image, fetched when the message is sent; a page that cannot be read sends no preview)',
    }),
  ),
});

export const ImageParams = Type.Object({
  image: MediaContainer('INVALID_IMAGE_URL', 'image (JPEG, PNG, GIF or WebP, up to 16 MB)'),
  caption: Type.Optional(Caption),
  viewOnce: Type.Optional(ViewOnce),
});

export const VideoParams = Type.Object({
  video: MediaContainer('INVALID_MEDIA_URL', 'video (up to 64 MB)'),
  mimetype: Type.Optional(Mimetype),
  caption: Type.Optional(Caption),
  viewOnce: Type.Optional(ViewOnce),
});

export const AudioParams = Type.Object({
  audio: MediaContainer('INVALID_MEDIA_URL', 'audio (up to 16 MB)'),
  mimetype: Type.Optional(Mimetype),
  /** Sent as a voice note (played inline, with a waveform) instead of as an audio file. */
  ptt: Type.Optional(Type.Boolean()),
});

export const FileParams = Type.Object({
  document: MediaContainer('INVALID_MEDIA_URL', 'file (up to 100 MB)'),
  fileName: Type.Optional(
    Type.String({
      'x-check': 'fileName',
      description: `Name shown to the recipient, at most ${FILE_NAME_MAX} characters, no '/' (default: the URL's last path segment, else "file")`,
    }),
  ),
  mimetype: Type.Optional(Mimetype),
  caption: Type.Optional(Caption),
});

const degrees = (limit: number, description: string) =>
  Type.Number({
    minimum: -limit,
    maximum: limit,
    description,
    'x-messages': {
      minimum: `must be between -${limit} and ${limit}`,
      maximum: `must be between -${limit} and ${limit}`,
    },
  });

export const LocationParams = Type.Object({
  location: Type.Object({
    degreesLatitude: degrees(90, 'Latitude, -90 to 90'),
    degreesLongitude: degrees(180, 'Longitude, -180 to 180'),
    name: Type.Optional(Text({ max: LOCATION_TEXT_MAX, required: false })),
    address: Type.Optional(Text({ max: LOCATION_TEXT_MAX, required: false })),
  }),
});

/** List params for the given limits (tests widen them to reach rules the defaults shadow). */
export function listParamsSchema(limits: ListLimits) {
  const text = (max: number, description?: string) => Text({ max, required: true }, description);
  const Row = Type.Object({
    title: text(limits.rowTitle),
    rowId: Text(
      { max: limits.rowId, required: true, identifier: true },
      'Unique within the list; sent back on a pick.',
    ),
    description: Type.Optional(Text({ max: limits.rowDescription, required: false })),
  });
  const Section = Type.Object({
    title: text(limits.sectionTitle),
    rows: Type.Array(Row, {
      minItems: 1,
      maxItems: limits.rowsPerSection,
      'x-messages': {
        minItems: 'must have at least 1 row',
        maxItems: `must have at most ${plural(limits.rowsPerSection, 'row')}`,
      },
    }),
  });
  return Type.Object(
    {
      title: text(limits.title),
      text: text(limits.text, 'The message body.'),
      footer: Type.Optional(Text({ max: limits.footer, required: false })),
      buttonText: text(limits.buttonText, 'The button that opens the list.'),
      sections: Type.Array(Section, {
        minItems: 1,
        maxItems: limits.sections,
        'x-max-total': {
          items: 'rows',
          max: limits.rowsTotal,
          message: `must have at most ${plural(limits.rowsTotal, 'row')} in total`,
        },
        'x-messages': {
          minItems: 'must have at least 1 section',
          maxItems: `must have at most ${plural(limits.sections, 'section')}`,
        },
      }),
    },
    { 'x-unique': 'rowId' },
  );
}

export const ListParams = listParamsSchema(LIST_LIMITS);

const ButtonLabel = Text({ max: TEMPLATE_LIMITS.displayText, required: true });
export const BUTTON_KINDS = ['urlButton', 'callButton', 'quickReplyButton'] as const;

const TemplateButton = Type.Object(
  {
    index: Type.Integer({
      minimum: 1,
      description: 'Order of the button; unique',
      'x-messages': { '*': 'must be an integer of at least 1' },
    }),
    urlButton: Type.Optional(
      Type.Object({ displayText: ButtonLabel, url: HttpUrl('VALIDATION_FAILED', 'Opened by the recipient') }),
    ),
    callButton: Type.Optional(
      Type.Object({
        displayText: ButtonLabel,
        phoneNumber: Type.String({
          'x-check': 'callNumber',
          description: 'Country code first; a leading + is allowed',
          'x-messages': { '*': CALL_NUMBER_RULE },
        }),
      }),
    ),
    quickReplyButton: Type.Optional(
      Type.Object({
        displayText: ButtonLabel,
        id: Text({ max: TEMPLATE_LIMITS.replyId, required: true, identifier: true }, 'Sent back when tapped.'),
      }),
    ),
  },
  { 'x-one-of-fields': BUTTON_KINDS, description: 'Exactly one of urlButton, callButton, quickReplyButton' },
);

export const TemplateParams = Type.Object({
  text: Text({ max: TEMPLATE_LIMITS.text, required: true }),
  footer: Type.Optional(Text({ max: TEMPLATE_LIMITS.footer, required: false })),
  templateButtons: Type.Array(TemplateButton, {
    minItems: 1,
    maxItems: TEMPLATE_LIMITS.buttons,
    'x-unique': 'index',
    'x-messages': {
      minItems: 'must have at least 1 button',
      maxItems: `must have at most ${TEMPLATE_LIMITS.buttons} buttons`,
    },
  }),
});

export const PARAMS: Record<MessageType, TSchema> = {
  chat: ChatParams,
  image: ImageParams,
  list: ListParams,
  file: FileParams,
  video: VideoParams,
  audio: AudioParams,
  location: LocationParams,
  template: TemplateParams,
  sticker: StickerParams,
  contact: ContactParams,
  poll: PollParams,
};

// --- replies and mentions (docs/internals.md, Whatspie compatibility), beside every type's own params --------------------

const Mentions = Type.Array(
  Phone('A number mentioned; write `@number` in the text where the mention shows (a mention without it only notifies)'),
  {
    maxItems: MENTIONS_MAX,
    description: `Numbers mentioned in the text or caption, at most ${MENTIONS_MAX}`,
    'x-messages': { maxItems: `must have at most ${MENTIONS_MAX} numbers` },
  },
);

/** `mentions` with a type that has no text: refused, never dropped. */
const NoMentions = (type: MessageType) =>
  Type.Unsafe<never>({
    not: {},
    description: `Not allowed: ${type} messages have no text to mention in`,
    'x-messages': { '*': `is not allowed with ${type} messages: they have no text to mention in` },
  });

const QuotedMessageId = Type.String({
  minLength: 1,
  maxLength: QUOTED_ID_MAX,
  description:
    'Sends the message as a reply to this one: the id of a message this device sent, or of one it received (the gateway’s id or the network’s). An id the device does not know is refused.',
  'x-messages': { minLength: 'must not be empty', maxLength: `must be at most ${QUOTED_ID_MAX} characters` },
});

const replyParams = (type: MessageType, mentions: boolean) =>
  Type.Object({
    mentions: Type.Optional(mentions ? Mentions : NoMentions(type)),
    quotedMessageId: Type.Optional(QuotedMessageId),
  });

/** The reply fields of each type's params, validated beside them (their findings name `params.…` in full). */
export const REPLY_PARAMS: Record<MessageType, TSchema> = {
  chat: replyParams('chat', true),
  image: replyParams('image', true),
  list: replyParams('list', true),
  file: replyParams('file', true),
  video: replyParams('video', true),
  audio: replyParams('audio', false),
  location: replyParams('location', false),
  template: replyParams('template', true),
  sticker: replyParams('sticker', false),
  contact: replyParams('contact', false),
  poll: replyParams('poll', false),
};

/**
 * A type's params as the document shows them: its own fields and the reply fields it takes. A field the type
 * refuses (`mentions` of audio and locations) is not offered: a generated client must not have it, and the
 * description says what sending it anyway answers.
 */
function documentedParams(type: MessageType): TSchema {
  const own = PARAMS[type] as TSchema & { properties: Record<string, TSchema>; description?: string };
  const reply = REPLY_PARAMS[type] as TSchema & { properties: Record<string, TSchema> };
  const offered = Object.fromEntries(
    Object.entries(reply.properties).filter(([, schema]) => (schema as { not?: unknown }).not === undefined),
  );
  const refused = Object.keys(reply.properties).filter((name) => !(name in offered));
  const note = refused.map(
    (name) => `\`${name}\` is not allowed: ${type} messages have no text (400 Validation failed).`,
  );
  const description = [own.description, ...note].filter((part) => part !== undefined).join(' ');
  return {
    ...own,
    ...(description === '' ? {} : { description }),
    properties: { ...own.properties, ...offered },
  };
}

// --- the body ------------------------------------------------------------------------------

const SimulateTyping = Type.Unsafe<0 | 1 | boolean>({
  enum: [0, 1, false, true],
  description: '1: show "typing…" before sending, for a time that grows with the text',
  'x-messages': { '*': 'must be 0 or 1' },
});

/** What a receiver may be: a phone number, or a group the device is in (docs/internals.md, Whatspie compatibility). */
export const RECEIVER_RULE = `${PHONE_RULE}; or a group’s network id ending in @g.us`;

/** The fields every send body has besides `type` and `params`. */
export const AddressFields = {
  device: Phone('The sending device’s number'),
  receiver: Type.String({
    pattern: `^(?:${PHONE_PATTERN.source.slice(1, -1)}|${GROUP_JID_PATTERN.source.slice(1, -1)})$`,
    description:
      'The recipient’s number (international format, digits only, no +), or the network id of a group the device is in (`…@g.us`)',
    examples: ['6281234567890', '120363012345678901@g.us'],
    'x-code': 'INVALID_PHONE',
    'x-messages': { '*': RECEIVER_RULE },
  }),
};

export const CommonFields = Type.Object({
  ...AddressFields,
  simulate_typing: Type.Optional(SimulateTyping),
});

/** What validation checks of a group send besides `type` and `params` (the service fills `device` in). */
export const SenderFields = Type.Object({
  device: AddressFields.device,
  simulate_typing: Type.Optional(SimulateTyping),
});

export const GroupCommonFields = Type.Object({
  device: Type.Optional(Phone('The sending device’s number (default: the group’s device)')),
  simulate_typing: Type.Optional(SimulateTyping),
});

const DESCRIPTIONS: Record<MessageType, string> = {
  chat: 'A text message',
  image: 'An image, fetched from its URL when the message is accepted',
  list: 'A list message: a button that opens sections of rows to pick from',
  file: 'A document, fetched from its URL',
  video: 'A video, fetched from its URL',
  audio: 'An audio message, fetched from its URL',
  location: 'A location pin',
  template: 'A text with up to 3 buttons (link, call, quick reply)',
  sticker: 'A sticker (WebP, up to 1 MB), fetched from its URL',
  contact: 'Contact cards (vCards), 1 to 10',
  poll: 'A poll: a question and 2 to 12 answers to vote on',
};

function bodyOf(type: MessageType, common: typeof CommonFields | typeof GroupCommonFields) {
  return Type.Object(
    {
      ...common.properties,
      type: Type.Literal(type),
      params: documentedParams(type),
    },
    { title: `${type} message`, description: DESCRIPTIONS[type] },
  );
}

/** The body of `POST /messages` for the OpenAPI document: one shape per type, keyed on `type`. */
export const SendBodySchema = Type.Unsafe<Static<typeof CommonFields> & { type: MessageType; params: unknown }>({
  oneOf: MESSAGE_TYPES.map((type) => bodyOf(type, CommonFields)),
  discriminator: { propertyName: 'type' },
  // Shown by /docs instead of an example made up from the schema ("string" in every field).
  'x-examples': SEND_EXAMPLES,
});

/** The body of `POST /groups/{id}/send`: the same without `receiver`, `device` optional. */
export const GroupSendBodySchema = Type.Unsafe<
  Static<typeof GroupCommonFields> & { type: MessageType; params: unknown }
>({
  oneOf: MESSAGE_TYPES.map((type) => bodyOf(type, GroupCommonFields)),
  discriminator: { propertyName: 'type' },
  'x-examples': GROUP_SEND_EXAMPLES,
});

export type ChatParamsBody = Static<typeof ChatParams>;
export type ImageParamsBody = Static<typeof ImageParams>;
export type VideoParamsBody = Static<typeof VideoParams>;
export type AudioParamsBody = Static<typeof AudioParams>;
export type FileParamsBody = Static<typeof FileParams>;
export type LocationParamsBody = Static<typeof LocationParams>;
export type ListParamsBody = Static<typeof ListParams>;
export type TemplateParamsBody = Static<typeof TemplateParams>;
export { ContactParams, PollParams, StickerParams };
