/**
 * What a phone's inbox shows of the kinds of content beyond text and media bytes (docs/standin.md): a voice note's
 * `ptt`, contact cards (their vCards as sent), a poll (question, options, how many may be picked, and whether it
 * carried the message secret its votes need), and a text's link preview (title, description, the link, and a
 * fingerprint of its thumbnail).
 *
 * Owns: reading these out of a decrypted message for the inbox entry.
 * Must never: change the message, or answer a field the message does not carry.
 */
import { createHash } from 'node:crypto';
import type { proto } from 'baileys';

export interface ContentDetails {
  /** The inbox type when the first field of the message does not say it well (`contact`, `poll`). */
  type?: string;
  ptt?: true;
  contacts?: Array<{ display_name: string; vcard: string }>;
  poll?: { name: string; options: string[]; selectable_count: number; has_secret: boolean };
  link_preview?: { url: string; title: string; description?: string; thumbnail_sha256?: string };
}

export function contentDetails(message: proto.IMessage): ContentDetails {
  if (message.audioMessage?.ptt === true) return { ptt: true };
  const cards = message.contactsArrayMessage?.contacts ?? (message.contactMessage ? [message.contactMessage] : null);
  if (cards !== null) {
    return {
      type: 'contact',
      contacts: cards.map((card) => ({ display_name: card.displayName ?? '', vcard: card.vcard ?? '' })),
    };
  }
  const poll = message.pollCreationMessageV3 ?? message.pollCreationMessage ?? message.pollCreationMessageV2;
  if (poll) {
    return {
      type: 'poll',
      poll: {
        name: poll.name ?? '',
        options: (poll.options ?? []).map((option) => option.optionName ?? ''),
        selectable_count: poll.selectableOptionsCount ?? 0,
        has_secret: (message.messageContextInfo?.messageSecret?.length ?? 0) > 0,
      },
    };
  }
  const text = message.extendedTextMessage;
  if (text?.title) {
    const thumbnail = text.jpegThumbnail;
    return {
      link_preview: {
        url: text.matchedText ?? '',
        title: text.title,
        ...(text.description ? { description: text.description } : {}),
        ...(thumbnail && thumbnail.length > 0
          ? { thumbnail_sha256: createHash('sha256').update(thumbnail).digest('hex') }
          : {}),
      },
    };
  }
  return {};
}
