/**
 * Mentions in a LID-addressed group: each mentioned number as the member's LID, in the mention and in the text.
 *
 * In a group whose addressing mode is LID, WhatsApp names members by LID: a phone mentioning a member there sends
 * `mentionedJid: ["<lid>@lid"]` and `@<lid>` in the text, and renders a mention where the text's `@<user>` matches
 * a mentioned id. Baileys 7 passes `mentions` through as given (Utils/messages.js), so the connector does what a
 * phone does: the LID from the group's metadata (each member's number beside its LID), else from the library's
 * LID mapping; a number whose LID is unknown stays a number. Direct chats and number-addressed groups keep numbers.
 *
 * Owns: that translation for one outgoing message. Must never: change anything but the mentioned ids and the
 * `@number` they stand for in the text or caption, or fail a send because a LID could not be found.
 */
import { isLidUser, isPnUser, type GroupMetadata } from 'baileys';
import type { NetworkMessageContent, PhoneNumber } from '../network.js';
import { userJid } from './numbers.js';

/** The number's LID as `<lid>@lid`, or null when neither the group nor the library knows it. */
export type LidOfNumber = (pnJid: string) => Promise<string | null | undefined>;

export interface AddressedMentions {
  readonly content: NetworkMessageContent;
  /** The ids to mention: LIDs where known, else `<number>@s.whatsapp.net`. */
  readonly mentions: ReadonlyArray<string>;
}

/** The member's LID in the group's metadata: its `id` beside its `phoneNumber`, or its `lid` beside its number `id`. */
export function lidOfMember(metadata: Pick<GroupMetadata, 'participants'>, pnJid: string): string | null {
  for (const p of metadata.participants) {
    if (p.phoneNumber === pnJid && isLidUser(p.id)) return p.id;
    if (p.id === pnJid && typeof p.lid === 'string' && isLidUser(p.lid)) return p.lid;
  }
  return null;
}

function retext(text: string, swaps: ReadonlyArray<readonly [string, string]>): string {
  let out = text;
  for (const [phone, lidUser] of swaps) out = out.replace(new RegExp(`@${phone}(?!\\d)`, 'g'), `@${lidUser}`);
  return out;
}

/**
 * The mentions of a message to a group with `metadata` (undefined: not a group, or its metadata unknown), and its
 * content with each `@number` of a mention that became a LID written as `@<lid>`.
 */
export async function addressMentions(
  content: NetworkMessageContent,
  mentions: ReadonlyArray<PhoneNumber>,
  metadata: Pick<GroupMetadata, 'participants' | 'addressingMode'> | undefined,
  lidOf: LidOfNumber,
): Promise<AddressedMentions> {
  const numbers = mentions.map(userJid);
  if (mentions.length === 0 || metadata?.addressingMode !== 'lid') return { content, mentions: numbers };
  const swaps: Array<readonly [string, string]> = [];
  const ids: string[] = [];
  for (const [i, phone] of mentions.entries()) {
    const pnJid = numbers[i]!;
    const known = lidOfMember(metadata, pnJid) ?? (await lidOf(pnJid).catch(() => null));
    const lid = typeof known === 'string' && isLidUser(known) ? known.replace(/:\d+@/, '@') : null;
    if (lid === null || !isPnUser(pnJid)) {
      ids.push(pnJid);
      continue;
    }
    ids.push(lid);
    swaps.push([phone, lid.split('@')[0]!]);
  }
  if (swaps.length === 0) return { content, mentions: ids };
  switch (content.type) {
    case 'chat':
      return { content: { ...content, text: retext(content.text, swaps) }, mentions: ids };
    case 'image':
    case 'video':
    case 'file':
      return content.caption === undefined
        ? { content, mentions: ids }
        : { content: { ...content, caption: retext(content.caption, swaps) }, mentions: ids };
    default:
      return { content, mentions: ids };
  }
}
