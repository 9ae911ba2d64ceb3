/**
 * Who the gateway says it is when it links to a phone, and when a pairing
 * attempt has really been confirmed (docs/whatsapp.md, Pairing).
 *
 * Owns: the browser label (shown on the phone under Linked devices) and the
 * test for a confirmed identity. Pure.
 * Must never: take a label WhatsApp does not know as a web client: the phone
 * refuses to link by pairing code to an "other" client.
 */
import { Browsers, jidDecode, type AuthenticationCreds } from 'baileys';
import { NetworkUnavailableError } from '../network.js';

/** Shown on the phone as "Chrome (Ubuntu)"; Chrome is a web client WhatsApp accepts for pairing codes. */
export const GATEWAY_BROWSER = Browsers.ubuntu('Chrome');

/**
 * Whether the credentials name an account the phone confirmed. Asking for a pairing code makes the library
 * name the number at once, without a device part; only the phone's pair-success gives the id its device.
 */
export function confirmedIdentity(creds: AuthenticationCreds | undefined): boolean {
  const id = creds?.me?.id;
  if (id === undefined) return false;
  return jidDecode(id)?.device !== undefined;
}

/**
 * Forgets the number a pairing code request wrote into unconfirmed credentials, so the next socket of the
 * attempt registers afresh instead of logging in as an account that does not exist yet.
 */
export function forgetUnconfirmed(creds: AuthenticationCreds | undefined): void {
  if (creds === undefined || creds.me === undefined || confirmedIdentity(creds)) return;
  delete creds.me;
  delete creds.pairingCode;
}

/** A pairing code for `phone` on the socket of a running pairing attempt (null: none runs), as the phone shows it. */
export async function pairingCodeOn(
  socket: { requestPairingCode(phone: string): Promise<string> } | null,
  phone: string,
): Promise<string> {
  if (socket === null) throw new NetworkUnavailableError('no pairing attempt is running on this connection');
  const code = await socket.requestPairingCode(phone);
  // WhatsApp shows the code as two groups of four.
  return code.length === 8 ? `${code.slice(0, 4)}-${code.slice(4)}` : code;
}
