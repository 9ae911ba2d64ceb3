/**
 * Contact cards a phone sends (`contactMessage`, `contactsArrayMessage`) → the seam's contact cards: each card's
 * name and phone numbers, read from its vCard (docs/whatsapp.md, Incoming kinds). Pure.
 *
 * Owns: a small vCard reader: lines unfolded, the name from `FN` (else `N`, else the name WhatsApp shows beside the
 * card), each `TEL` line's number (its `waid`, the WhatsApp number behind it, when given; else the digits shown).
 * Must never: throw on a card however malformed, or keep more than its bounds (a card is text from anyone).
 */
import type { proto } from 'baileys';
import type { IncomingContactCard } from '../network.js';

/** Longest vCard read; past it the rest of the card is ignored. */
const MAX_CARD_CHARS = 64 * 1024;
const MAX_NAME_CHARS = 256;
const MAX_PHONES = 20;
/** Cards of one message passed on at most. */
export const MAX_CARDS = 50;

/** A number as digits, when the text has a plausible count of them (a TEL value may be anything). */
function phoneDigits(text: string): string | null {
  const digits = text.replace(/\D/g, '');
  return digits.length >= 3 && digits.length <= 20 ? digits : null;
}

/** Undoes vCard text escapes (`\,` `\;` `\\` `\n`). */
function unescape(value: string): string {
  return value.replace(/\\([\\,;nN])/g, (_, c: string) => (c === 'n' || c === 'N' ? ' ' : c));
}

const clip = (name: string) => name.replace(/\s+/g, ' ').trim().slice(0, MAX_NAME_CHARS);

/** One line split into its property name, parameters and value; null when it has no `:`. */
function property(line: string): { name: string; params: string[]; value: string } | null {
  const colon = line.indexOf(':');
  if (colon <= 0) return null;
  const [head = '', ...params] = line.slice(0, colon).split(';');
  // A grouped property (`item1.TEL`) is the property after the dot.
  const name = head.slice(head.lastIndexOf('.') + 1).toUpperCase();
  return { name, params, value: line.slice(colon + 1) };
}

/** The name and numbers on one vCard; an empty name and no numbers when it has neither. */
export function parseVcard(card: string): IncomingContactCard {
  const text = typeof card === 'string' ? card.slice(0, MAX_CARD_CHARS) : '';
  // A line that starts with a space or tab continues the one before it.
  const lines = text
    .replace(/\r\n|\r/g, '\n')
    .replace(/\n[ \t]/g, '')
    .split('\n');
  let fullName = '';
  let structured = '';
  const phones: string[] = [];
  for (const line of lines) {
    const prop = property(line);
    if (prop === null) continue;
    if (prop.name === 'FN' && fullName === '') fullName = clip(unescape(prop.value));
    else if (prop.name === 'N' && structured === '') {
      // family;given;additional;prefix;suffix, shown given first.
      const [family = '', given = '', additional = ''] = prop.value.split(';').map(unescape);
      structured = clip([given, additional, family].filter((part) => part.trim() !== '').join(' '));
    } else if (prop.name === 'TEL' && phones.length < MAX_PHONES) {
      const waid = prop.params.find((param) => /^waid=/i.test(param));
      const phone = phoneDigits(waid === undefined ? prop.value : waid.slice(5)) ?? phoneDigits(prop.value);
      if (phone !== null && !phones.includes(phone)) phones.push(phone);
    }
  }
  return { name: fullName !== '' ? fullName : structured, phones };
}

/** The seam's cards for a message's contact messages, each named by WhatsApp's display name where its card is not. */
export function contactCards(
  contacts: ReadonlyArray<proto.Message.IContactMessage | null | undefined>,
): IncomingContactCard[] {
  return contacts.slice(0, MAX_CARDS).flatMap((contact) => {
    if (contact === null || contact === undefined) return [];
    const card = parseVcard(contact.vcard ?? '');
    return [card.name === '' ? { ...card, name: clip(contact.displayName ?? '') } : card];
  });
}
