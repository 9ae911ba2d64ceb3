/**
 * Our message ids on WhatsApp: a reversible encoding of the gateway's ULID as
 * a network message id.
 *
 * Owns: the codec. WhatsApp Web's own ids are `3EB0` and hex; ours are `3EB0`
 * and the 16 bytes of the ULID in upper-case hex (36 characters), so a retry
 * reuses the same network id, a receipt maps back without a lookup table, and
 * a message sent from the phone itself (18 hex digits after `3EB0`, or another
 * form) is recognised as not the gateway's.
 * Must never: map two ULIDs to one id, or claim an id that is not ours.
 */
import { isValid, ulidToUUID, uuidToULID } from 'ulid';

const PREFIX = '3EB0';
const OURS = /^3EB0([0-9A-F]{32})$/;

/** The network id of one of our messages; null when the id is not a ULID (it cannot be carried). */
export function toNetworkId(messageId: string): string | null {
  if (!isValid(messageId)) return null;
  return PREFIX + ulidToUUID(messageId).replaceAll('-', '').toUpperCase();
}

/** Our message id behind a network id, or null when the message is not one the gateway sent. */
export function fromNetworkId(networkId: string | null | undefined): string | null {
  const match = OURS.exec(networkId ?? '');
  if (match === null) return null;
  const hex = match[1]!;
  const uuid = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  try {
    return uuidToULID(uuid);
  } catch {
    return null;
  }
}
