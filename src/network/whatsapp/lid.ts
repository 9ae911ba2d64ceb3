/**
 * Senders known by LID (docs/whatsapp.md, Senders known by LID).
 *
 * Owns: who sent an incoming message when WhatsApp names the sender by LID
 * (its opaque per-user id) instead of the phone number: the number beside the
 * LID when the stanza carries one, else the number the library's own mapping
 * store knows for the LID (`signalRepository.lidMapping`, fed by the network:
 * envelope attributes, user syncs, history sync, `lid-mapping.update`), else
 * the LID itself (`12345@lid`), so the message is delivered anyway; turning a
 * mapping the library announces into the seam's `lid_resolved`; and the JID a
 * stored sender stands for (a number or a LID form) when the gateway quotes it.
 * Must never: store a mapping (the library's auth-state keys already keep
 * every LID/number pair it learns, sealed in the session's state as
 * `lid-mapping` rows: a second copy could only drift from it), report a LID
 * as a phone number, or drop a message because its sender has no number yet.
 */
import { isJidBroadcast, isJidGroup, isLidUser, jidDecode, jidNormalizedUser } from 'baileys';
import type { Logger } from 'pino';
import type { NetworkEvent, PhoneNumber } from '../network.js';
import { phoneOf, userJid } from './numbers.js';

/** The part of the library's LID mapping store the gateway reads. */
export interface LidLookup {
  getPNForLID(lid: string): Promise<string | null>;
}

/** A sender as far as the stanza tells: `from` a phone number or, with no number known, the LID form. */
export interface Sender {
  readonly from: PhoneNumber | string;
  readonly fromLid?: string;
}

type Incoming = Extract<NetworkEvent, { type: 'incoming_message' }>;
type LidResolved = Extract<NetworkEvent, { type: 'lid_resolved' }>;

/** The LID form of a LID JID (`12345@lid`, the device part dropped), or null for anything else. */
export function lidOf(jid: string | null | undefined): string | null {
  if (jid === null || jid === undefined || !isLidUser(jid)) return null;
  const user = jidDecode(jid)?.user;
  return user !== undefined && /^\d{1,32}$/.test(user) ? `${user}@lid` : null;
}

/** True for a stored sender that is a LID form rather than a phone number. */
export const isLidForm = (address: string): boolean => lidOf(address) === address;

/** The JID a stored address stands for: a LID form as it is, a phone number as its user JID. */
export function addressJid(address: PhoneNumber | string): string {
  return isLidForm(address) ? address : userJid(address);
}

/**
 * The sender from a JID and the alternative id the network sent beside it (the number behind a LID, or the LID
 * behind a number); null when neither is a number or a LID.
 */
export function senderOf(jid: string | null | undefined, alt: string | null | undefined): Sender | null {
  const lid = lidOf(jid);
  if (lid !== null) {
    const behind = phoneOf(alt);
    return { from: behind ?? lid, fromLid: lid };
  }
  const phone = phoneOf(jid);
  if (phone === null) return null;
  const altLid = lidOf(alt);
  return altLid === null ? { from: phone } : { from: phone, fromLid: altLid };
}

/**
 * Who wrote a message (or a change to one) in `chat`: in a group or from a broadcast list the participant, else the
 * chat itself. The library files the number behind a LID participant as `participantAlt` in groups only; for a
 * broadcast list it is `remoteJidAlt`.
 */
export function senderInChat(
  chat: string,
  key: { participant?: string | null; participantAlt?: string | null; remoteJidAlt?: string | null },
): Sender | null {
  if (isJidGroup(chat) === true) return senderOf(key.participant, key.participantAlt);
  if (isJidBroadcast(chat) === true) return senderOf(key.participant, key.participantAlt ?? key.remoteJidAlt);
  return senderOf(chat, key.remoteJidAlt);
}

/**
 * The incoming message (or change: message-changes.ts) with its sender's number when the library's mapping store knows the LID it came from;
 * unchanged when it carries a number already, or nothing is known (a failed lookup counts as nothing known:
 * the message is delivered under its LID rather than held).
 */
export async function resolveSender<T extends Pick<Incoming, 'from' | 'fromLid'>>(
  event: T,
  lookup: LidLookup | null,
  logger: Logger,
): Promise<T> {
  if (event.fromLid === undefined || event.from !== event.fromLid || lookup === null) return event;
  const pn = await lookup.getPNForLID(event.fromLid).catch((error: unknown) => {
    logger.warn({ err: error }, 'looking up the number behind a LID failed');
    return null;
  });
  const phone = phoneOf(pn === null ? null : jidNormalizedUser(pn));
  return phone === null ? event : { ...event, from: phone };
}

/** The seam's report of a mapping the library announced (`lid-mapping.update`); null when it is not one. */
export function lidResolved(update: { readonly lid?: string; readonly pn?: string }): LidResolved | null {
  const lid = lidOf(update.lid);
  const phone = phoneOf(update.pn === undefined ? null : jidNormalizedUser(update.pn));
  return lid === null || phone === null ? null : { type: 'lid_resolved', lid, phone };
}
