/**
 * The seam's outgoing content → Baileys message content. Pure but for media,
 * which becomes a stream that reads the seam's source only once Baileys pulls.
 *
 * Owns: the mapping of every type; `list` and `template` go as their text
 * form (interactive.ts; docs/internals.md, WhatsApp and sandbox accounts: WhatsApp no longer renders them from a
 * linked device); mentions (the people's ids beside the text; the `@number`
 * in the text is the sender's to write); a reaction as Baileys' `react`; contacts as vCards (vcard.ts); a
 * poll with the secret its votes are encrypted with; a chat's link preview as the gateway made it.
 * Must never: send an interactive shape here (it is accepted and then
 * silently never shown); the experimental native form is sent elsewhere.
 */
import { Readable } from 'node:stream';
import type { AnyMessageContent, WAMediaUpload, WAUrlInfo } from 'baileys';
import type { LinkPreview, MediaSource, NetworkMessageContent, PhoneNumber } from '../network.js';
import { interactiveAsText } from './interactive.js';
import { userJid } from './numbers.js';
import { quotedMessage } from './quoted.js';
import { contactsDisplayName, vcardOf } from './vcard.js';

/**
 * Media as Baileys takes a stream: it reads it once, encrypting to a temporary file as it goes, so
 * the file is never whole in memory. Nothing is read until Baileys starts; every send opens anew.
 * A byte stream (not object mode), so it buffers at most about one chunk ahead of the reader.
 */
function upload(media: MediaSource): WAMediaUpload {
  return { stream: Readable.from(media.open(), { objectMode: false }) };
}

/**
 * A chat's preview as the library carries it: title, description and, when the page's image is a JPEG (the one
 * kind WhatsApp shows inline), its bytes as the thumbnail; null for none.
 */
function linkPreview(preview: LinkPreview | undefined): WAUrlInfo | null {
  if (preview === undefined) return null;
  const thumbnail = preview.thumbnail;
  return {
    'canonical-url': preview.url,
    'matched-text': preview.url,
    title: preview.title,
    ...(preview.description === undefined ? {} : { description: preview.description }),
    ...(thumbnail?.mimetype === 'image/jpeg' ? { jpegThumbnail: Buffer.from(thumbnail.base64, 'base64') } : {}),
  };
}

/**
 * The Baileys content of a message. `mentions` go with the types that carry a text or caption (WhatsApp
 * shows a mention where the text has `@number`); audio and locations have none, and the gateway never
 * sends mentions with them.
 */
export function outgoingContent(
  content: NetworkMessageContent,
  mentions: ReadonlyArray<PhoneNumber> = [],
  /** A poll's message secret, kept before it is sent (poll-secrets.ts): the key of its votes. */
  pollSecret?: Uint8Array,
): AnyMessageContent {
  // A number, or an id already addressed (a member's LID in a LID-addressed group: group-mentions.ts).
  const ids = mentions.map((m) => (m.includes('@') ? m : userJid(m)));
  const mentioned = mentions.length === 0 ? {} : { mentions: ids };
  switch (content.type) {
    case 'chat':
      // Always given (null: none), so the library never fetches a preview itself, past the gateway's address guard.
      return { text: content.text, linkPreview: linkPreview(content.preview), ...mentioned };
    case 'sticker':
      return { sticker: upload(content.media), mimetype: content.mimetype };
    case 'contact':
      return {
        contacts: {
          displayName: contactsDisplayName(content.contacts),
          contacts: content.contacts.map((contact) => ({ displayName: contact.name, vcard: vcardOf(contact) })),
        },
      };
    case 'poll':
      return {
        poll: {
          name: content.name,
          values: [...content.options],
          selectableCount: content.selectableCount,
          ...(pollSecret === undefined ? {} : { messageSecret: pollSecret }),
        },
      };
    case 'image':
      return {
        image: upload(content.media),
        mimetype: content.mimetype,
        ...(content.caption === undefined ? {} : { caption: content.caption }),
        ...(content.viewOnce === true ? { viewOnce: true } : {}),
        ...mentioned,
      };
    case 'video':
      return {
        video: upload(content.media),
        mimetype: content.mimetype,
        ...(content.caption === undefined ? {} : { caption: content.caption }),
        ...(content.viewOnce === true ? { viewOnce: true } : {}),
        ...mentioned,
      };
    case 'audio':
      return {
        audio: upload(content.media),
        mimetype: content.mimetype,
        ...(content.ptt === true ? { ptt: true } : {}),
      };
    case 'file':
      return {
        document: upload(content.media),
        mimetype: content.mimetype,
        fileName: content.fileName,
        ...(content.caption === undefined ? {} : { caption: content.caption }),
        // Baileys' document type takes mentions only as the context they end up in.
        ...(mentions.length === 0 ? {} : { contextInfo: { mentionedJid: ids } }),
      };
    case 'location':
      return {
        location: {
          degreesLatitude: content.latitude,
          degreesLongitude: content.longitude,
          ...(content.name === undefined ? {} : { name: content.name }),
          ...(content.address === undefined ? {} : { address: content.address }),
        },
      };
    case 'list':
    case 'template':
      return { text: interactiveAsText(content), ...mentioned };
    case 'reaction':
      // A reaction names its message by key alone, the same key a reply quoting it carries.
      return { react: { text: content.emoji, key: quotedMessage(content.target, undefined).key } };
    case 'edit':
      // A protocol message naming the edited message by key; the library wraps the new text in it.
      return { text: content.text, edit: quotedMessage(content.target, undefined).key };
    case 'delete':
      return { delete: quotedMessage(content.target, undefined).key };
    case 'read':
      // Read receipts are no message: sending.ts sends them as receipts before it would get here.
      throw new Error('read receipts are not message content');
  }
}
