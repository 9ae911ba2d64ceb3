/**
 * Senders known by LID, as the gateway reports them (docs/whatsapp.md, Senders known by LID; docs/webhooks.md).
 *
 * Owns: noting a sender whose message was delivered under its LID (the network knew no number for it), and
 * recording `contact.lid_resolved {lid, phone}` once per device and LID when the number becomes known, in the
 * transaction of the message or network announcement that made it known, so the report is made exactly once.
 * Must never: change the messages already stored (they keep the sender they were delivered with), or report a LID
 * that never delivered a message under its LID (the client has nothing to connect it to).
 */
import { lidSendersRepository } from '../contacts/lid-senders.js';
import type { Db } from '../store/schema.js';
import { recordEvent, type EventDevice } from './record.js';

/** Who sent an incoming message, as the network seam says: `from` equals `fromLid` while no number is known. */
export interface SenderAddress {
  readonly from: string;
  readonly fromLid?: string;
}

/** For an incoming message being stored: notes a LID-only sender, or reports the number a LID turned out to have. */
export async function noteSender(db: Db, device: EventDevice, sender: SenderAddress, now: number): Promise<void> {
  if (sender.fromLid === undefined) return;
  if (sender.from === sender.fromLid) await lidSendersRepository.noteUnresolved(db, device.id, sender.fromLid, now);
  else await reportResolved(db, device, sender.fromLid, sender.from, now);
}

/** Records `contact.lid_resolved` when the LID delivered messages under its LID and was not reported yet. */
export async function reportResolved(
  db: Db,
  device: EventDevice,
  lid: string,
  phone: string,
  now: number,
): Promise<boolean> {
  if (lid === phone || !(await lidSendersRepository.resolve(db, device.id, lid, phone, now))) return false;
  await recordEvent(db, device, 'contact.lid_resolved', { lid, phone }, now);
  return true;
}
