/**
 * Phone numbers and WhatsApp user ids (JIDs), and matching number checks.
 *
 * Owns: `digits` ↔ `digits@s.whatsapp.net`, resolving a sender to a phone
 * number (a LID sender through the alternative id the network sends with it),
 * and matching `onWhatsApp` answers back to the numbers asked. Pure.
 * Must never: report a LID as a phone number, or guess a registration: a
 * number the network did not confirm is not registered.
 */
import { isLidUser, isPnUser, jidDecode, jidNormalizedUser } from 'baileys';
import type { PhoneNumber } from '../network.js';

export function userJid(phone: PhoneNumber): string {
  return `${phone}@s.whatsapp.net`;
}

/** The phone number of a phone-number JID (device suffix dropped), or null for anything else (a LID, a group). */
export function phoneOf(jid: string | null | undefined): PhoneNumber | null {
  if (jid === null || jid === undefined || !isPnUser(jidNormalizedUser(jid))) return null;
  const user = jidDecode(jid)?.user;
  return user !== undefined && /^\d{5,20}$/.test(user) ? user : null;
}

/** A sender's number: the JID itself when it is a number, else its alternative (the number behind a LID). */
export function senderPhone(jid: string | null | undefined, alt: string | null | undefined): PhoneNumber | null {
  if (jid !== null && jid !== undefined && !isLidUser(jid)) return phoneOf(jid);
  return phoneOf(alt);
}

/**
 * Matches `onWhatsApp` answers (which carry the JID, not the number asked) back to the numbers asked.
 * WhatsApp may answer under a rewritten number (e.g. Brazil's ninth digit); such answers are matched by
 * `leftovers` when exactly one number asked and one answer remain unmatched.
 */
export function matchNumbers(
  asked: readonly PhoneNumber[],
  answers: ReadonlyArray<{ readonly jid: string; readonly exists: boolean }>,
): Array<{ phone: PhoneNumber; registered: boolean }> {
  const registered = new Set<PhoneNumber>();
  const unmatched: PhoneNumber[] = [];
  for (const answer of answers) {
    const phone = phoneOf(answer.jid);
    if (phone === null || !answer.exists) continue;
    if (asked.includes(phone)) registered.add(phone);
    else unmatched.push(phone);
  }
  const leftovers = asked.filter((phone) => !registered.has(phone));
  if (unmatched.length === 1 && leftovers.length === 1) registered.add(leftovers[0]!);
  return asked.map((phone) => ({ phone, registered: registered.has(phone) }));
}
