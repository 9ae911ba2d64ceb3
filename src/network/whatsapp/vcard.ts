/**
 * Contact cards as WhatsApp carries them: one vCard (version 3.0) per person, with the number in the `waid`
 * form WhatsApp's apps read to offer "Message" and "Add".
 *
 * Owns: writing a card from the seam's SharedContact, escaping what vCard reserves.
 * Must never: write a field the contact did not give, or let a given text break the card's lines.
 */
import type { SharedContact } from '../network.js';

/** A text as a vCard value: backslash, comma and semicolon escaped, line breaks as `\n`. */
function escape(text: string): string {
  return text
    .replace(/\\/g, '\\\\')
    .replace(/[,;]/g, (c) => `\\${c}`)
    .replace(/\r\n|\r|\n/g, '\\n');
}

/** The card of one contact. */
export function vcardOf(contact: SharedContact): string {
  const digits = contact.phone.replace(/^\+/, '');
  return [
    'BEGIN:VCARD',
    'VERSION:3.0',
    `FN:${escape(contact.name)}`,
    ...(contact.organization === undefined ? [] : [`ORG:${escape(contact.organization)}`]),
    `TEL;type=CELL;type=VOICE;waid=${digits}:+${digits}`,
    'END:VCARD',
  ].join('\n');
}

/** What the chat shows of the message: the one name, or how many cards it holds. */
export function contactsDisplayName(contacts: ReadonlyArray<SharedContact>): string {
  return contacts.length === 1 ? contacts[0]!.name : `${contacts.length} contacts`;
}
