/**
 * What a sandbox phone sends (`POST /sandbox/phones/{phone}/messages`, docs/internals.md, The network seam and the
 * sandbox): the body's schema and its reading into the seam's incoming content.
 *
 * Owns: the body's rules (a `type` among the incoming kinds, `chat` by default; the field each type needs and no
 * field of another type; the same bounds as sending that kind), each refusal a 400 naming the field, and the
 * defaults (a media type's usual mimetype). Must never: fetch the media (the sandbox reads it from its URL when
 * the device downloads it), or pass on a body it has not checked.
 */
import { Type, type Static } from '@sinclair/typebox';
import { ApiError } from '../errors.js';
import type { IncomingContent } from '../network/network.js';

const PHONE = '^[1-9][0-9]{6,14}$';

export const PHONE_MESSAGE_TYPES = [
  'chat',
  'image',
  'video',
  'audio',
  'file',
  'sticker',
  'location',
  'contact',
  'poll',
] as const;
type PhoneMessageType = (typeof PHONE_MESSAGE_TYPES)[number];

const MEDIA_TYPES = new Set<PhoneMessageType>(['image', 'video', 'audio', 'file', 'sticker']);
/** Types whose `text` is their caption. */
const CAPTIONED = new Set<PhoneMessageType>(['chat', 'image', 'video', 'file']);

export const PhoneMessageBody = Type.Object(
  {
    to: Type.String({ pattern: PHONE, description: "The device's number", examples: ['6281234567890'] }),
    type: Type.Optional(
      Type.Union(
        PHONE_MESSAGE_TYPES.map((type) => Type.Literal(type)),
        { description: 'The incoming kind; `chat` by default' },
      ),
    ),
    text: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 4096,
        description: "A chat's text; the caption of an image, video or file",
      }),
    ),
    media: Type.Optional(
      Type.Object(
        {
          url: Type.String({ format: 'uri', pattern: '^https?://', maxLength: 2048 }),
          mimetype: Type.Optional(
            Type.String({ minLength: 3, maxLength: 255, pattern: '^[a-z]+/[^\\s]+', examples: ['image/jpeg'] }),
          ),
          file_name: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
        },
        {
          description:
            'image, video, audio, file, sticker: the media, read from `url` when the gateway downloads it (the message shows `media.status`, then serves it at `file_url`)',
        },
      ),
    ),
    location: Type.Optional(
      Type.Object({
        latitude: Type.Number({ minimum: -90, maximum: 90 }),
        longitude: Type.Number({ minimum: -180, maximum: 180 }),
        name: Type.Optional(Type.String({ minLength: 1, maxLength: 1000 })),
        address: Type.Optional(Type.String({ minLength: 1, maxLength: 1000 })),
      }),
    ),
    contacts: Type.Optional(
      Type.Array(
        Type.Object({
          name: Type.String({ minLength: 1, maxLength: 255 }),
          phone: Type.String({ pattern: PHONE, examples: ['6289876543210'] }),
        }),
        { minItems: 1, maxItems: 10 },
      ),
    ),
    poll: Type.Optional(
      Type.Object({
        name: Type.String({ minLength: 1, maxLength: 255 }),
        options: Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { minItems: 2, maxItems: 12 }),
        selectable_count: Type.Optional(Type.Integer({ minimum: 1, maximum: 12 })),
      }),
    ),
    ptt: Type.Optional(Type.Boolean({ description: 'audio: a voice note' })),
    reply_to: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 200,
        description: "One of our message ids (the device's, either direction)",
      }),
    ),
  },
  {
    examples: [
      { to: '6281234567890', text: 'Hi, is this open?' },
      { to: '6281234567890', type: 'poll', poll: { name: 'Lunch?', options: ['Rice', 'Noodles'] } },
    ],
  },
);
export type PhoneMessageBody = Static<typeof PhoneMessageBody>;

/** A media type's mimetype when the body gives none. */
function defaultMimetype(type: PhoneMessageType, ptt: boolean): string {
  switch (type) {
    case 'image':
      return 'image/jpeg';
    case 'video':
      return 'video/mp4';
    case 'audio':
      return ptt ? 'audio/ogg; codecs=opus' : 'audio/mpeg';
    case 'sticker':
      return 'image/webp';
    default:
      return 'application/octet-stream';
  }
}

/** The field each type needs, besides `media` for media types. */
const NEEDS: Partial<Record<PhoneMessageType, 'text' | 'location' | 'contacts' | 'poll'>> = {
  chat: 'text',
  location: 'location',
  contact: 'contacts',
  poll: 'poll',
};

/** The fields of the body that `type` does not take, or needs and lacks, by name. */
function fieldErrors(body: PhoneMessageBody, type: PhoneMessageType): Record<string, string[]> {
  const errors: Record<string, string[]> = {};
  const needed = NEEDS[type];
  if (needed !== undefined && body[needed] === undefined) errors[needed] = ['is required'];
  if (MEDIA_TYPES.has(type) && body.media === undefined) errors.media = ['is required'];
  const notTaken = (field: string) => (errors[field] = [`is not taken by type ${type}`]);
  if (body.text !== undefined && !CAPTIONED.has(type)) notTaken('text');
  if (body.media !== undefined && !MEDIA_TYPES.has(type)) notTaken('media');
  for (const field of ['location', 'contacts', 'poll'] as const) {
    if (body[field] !== undefined && NEEDS[type] !== field) notTaken(field);
  }
  if (body.ptt !== undefined && type !== 'audio') notTaken('ptt');
  if (body.media?.file_name !== undefined && type !== 'file') notTaken('media.file_name');
  if (type === 'sticker' && body.media?.mimetype !== undefined && body.media.mimetype !== 'image/webp') {
    errors['media.mimetype'] = ['must be image/webp for a sticker'];
  }
  const poll = body.poll;
  if (poll !== undefined && new Set(poll.options).size !== poll.options.length) {
    errors['poll.options'] = ['must be distinct'];
  }
  if (poll?.selectable_count !== undefined && poll.selectable_count > poll.options.length) {
    errors['poll.selectable_count'] = ['must be at most the number of options'];
  }
  return errors;
}

/** The incoming content the body describes; 400 `Validation failed` naming each field that is wrong. */
export function phoneMessageContent(body: PhoneMessageBody): IncomingContent {
  const type = body.type ?? 'chat';
  const errors = fieldErrors(body, type);
  if (Object.keys(errors).length > 0) throw new ApiError('VALIDATION_FAILED', { errors });
  switch (type) {
    case 'chat':
      return { type, text: body.text! };
    case 'location': {
      const { latitude, longitude, name, address } = body.location!;
      return {
        type,
        latitude,
        longitude,
        ...(name === undefined ? {} : { name }),
        ...(address === undefined ? {} : { address }),
      };
    }
    case 'contact':
      return { type, contacts: body.contacts!.map(({ name, phone }) => ({ name, phones: [phone] })) };
    case 'poll': {
      const { name, options, selectable_count: count } = body.poll!;
      return { type, name, options, selectableCount: count ?? 1 };
    }
    case 'audio': {
      const ptt = body.ptt === true;
      return { type, mimetype: body.media!.mimetype ?? defaultMimetype(type, ptt), ...(ptt ? { ptt } : {}) };
    }
    default: {
      const media = body.media!;
      return {
        type,
        mimetype: media.mimetype ?? defaultMimetype(type, false),
        ...(body.text === undefined ? {} : { caption: body.text }),
        ...(media.file_name === undefined ? {} : { fileName: media.file_name }),
      };
    }
  }
}
