/**
 * What a phone's inbox shows of the kinds of content beyond text and media bytes (docs/standin.md): a voice note's
 * `ptt`, contact cards (their vCards as sent), a poll (question, options, how many may be picked, and whether it
 * carried the message secret its votes need), and a text's link preview (title, description, the link, and a
 * fingerprint of its thumbnail); a reaction, edit or delete for everyone with the id of the message it acts on; a
 * message marked forwarded (whatever its kind).
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
  /** A reaction, an edit or a delete for everyone: the id of the message it acts on (as its key names it). */
  target_id?: string;
  /** A reaction's emoji (`""`: taken away). */
  emoji?: string;
  /** An edit's new text or caption. */
  edited_text?: string;
  /** The message came marked forwarded (its context's `isForwarded`). */
  forwarded?: true;
}

const REVOKE = 0;
const MESSAGE_EDIT = 14;

/** Reactions, edits and deletes for everyone a linked device sent: what they do to which message. */
function actionDetails(message: proto.IMessage): ContentDetails | null {
  const reaction = message.reactionMessage;
  if (reaction) return { type: 'reaction', target_id: reaction.key?.id ?? '', emoji: reaction.text ?? '' };
  const protocol = message.protocolMessage;
  if (protocol?.type === REVOKE) return { type: 'delete', target_id: protocol.key?.id ?? '' };
  if (protocol?.type === MESSAGE_EDIT) {
    const edited = protocol.editedMessage;
    const text = edited?.conversation ?? edited?.extendedTextMessage?.text ?? '';
    return { type: 'edit', target_id: protocol.key?.id ?? '', edited_text: text };
  }
  return null;
}

export function contentDetails(message: proto.IMessage): ContentDetails {
  const action = actionDetails(message);
  if (action !== null) return action;
  const details = kindDetails(message);
  return isForwarded(message) ? { ...details, forwarded: true } : details;
}

/** Whether the message's content (a text, media, a location, cards, a poll: whichever it is) says it was forwarded. */
function isForwarded(message: proto.IMessage): boolean {
  return Object.values(message).some(
    (content: unknown) =>
      content !== null &&
      typeof content === 'object' &&
      (content as { contextInfo?: { isForwarded?: boolean | null } | null }).contextInfo?.isForwarded === true,
  );
}

function kindDetails(message: proto.IMessage): ContentDetails {
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
