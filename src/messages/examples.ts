/**
 * The request examples `/docs` shows for `POST /messages` and `POST /groups/{id}/send`: one
 * realistic body per message type, each accepted as shown by a gateway with a paired device of
 * that number (test/http/openapi-examples.test.ts sends every one).
 *
 * Owns: the example bodies only. Must never: use a field value that a real request could not
 * send as it is (a placeholder such as "string", a message id that does not exist).
 */
import type { MessageType } from './message-types.js';

/** The number every example sends from and to. */
const PHONE = '6281234567890';

const PARAMS: Record<MessageType, { summary: string; params: Record<string, unknown> }> = {
  chat: { summary: 'Text', params: { text: 'Hello! Your order #1042 has shipped.' } },
  image: {
    summary: 'Image with a caption',
    params: { image: { url: 'https://example.com/images/receipt.jpg' }, caption: 'Your receipt' },
  },
  list: {
    summary: 'List of choices',
    params: {
      title: 'Opening hours',
      text: 'Which branch would you like to visit?',
      footer: 'Reply any time',
      buttonText: 'Choose a branch',
      sections: [
        {
          title: 'Jakarta',
          rows: [
            { title: 'Menteng', rowId: 'branch-menteng', description: 'Mon–Sat 09:00–18:00' },
            { title: 'Kemang', rowId: 'branch-kemang', description: 'Every day 10:00–20:00' },
          ],
        },
      ],
    },
  },
  file: {
    summary: 'Document',
    params: {
      document: { url: 'https://example.com/files/invoice-1042.docx' },
      fileName: 'invoice-1042.docx',
      mimetype: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
      caption: 'Invoice #1042',
    },
  },
  video: {
    summary: 'Video',
    params: { video: { url: 'https://example.com/videos/unboxing.mp4' }, mimetype: 'video/mp4', caption: 'Unboxing' },
  },
  audio: {
    summary: 'Voice message',
    params: { audio: { url: 'https://example.com/audio/greeting.ogg' }, mimetype: 'audio/ogg' },
  },
  location: {
    summary: 'Location',
    params: {
      location: {
        degreesLatitude: -6.175392,
        degreesLongitude: 106.827153,
        name: 'National Monument',
        address: 'Gambir, Central Jakarta',
      },
    },
  },
  sticker: { summary: 'Sticker', params: { sticker: { url: 'https://example.com/stickers/thanks.webp' } } },
  contact: {
    summary: 'Contact card',
    params: { contacts: [{ name: 'Siti Rahma', phone: '6281298765432', organization: 'Toko Maju' }] },
  },
  poll: {
    summary: 'Poll',
    params: { name: 'Which delivery day suits you?', options: ['Monday', 'Wednesday', 'Friday'], selectable_count: 1 },
  },
  template: {
    summary: 'Text with buttons',
    params: {
      text: 'Your appointment is tomorrow at 10:00.',
      footer: 'Reply to change it',
      templateButtons: [
        { index: 1, urlButton: { displayText: 'See details', url: 'https://example.com/appointments/77' } },
        { index: 2, callButton: { displayText: 'Call us', phoneNumber: '6281234567890' } },
        { index: 3, quickReplyButton: { displayText: 'Confirm', id: 'confirm-77' } },
      ],
    },
  },
};

type Examples = Record<string, { summary: string; value: Record<string, unknown> }>;

function examples(addressed: (type: MessageType) => Record<string, unknown>): Examples {
  return Object.fromEntries(
    Object.entries(PARAMS).map(([type, { summary, params }]) => [
      type,
      { summary, value: { ...addressed(type as MessageType), type, params } },
    ]),
  );
}

/** `POST /messages`: from the device to a receiver. */
export const SEND_EXAMPLES = examples(() => ({ device: PHONE, receiver: PHONE }));

/** `POST /groups/{id}/send`: to the group in the path, from the device. */
export const GROUP_SEND_EXAMPLES = examples(() => ({ device: PHONE }));
