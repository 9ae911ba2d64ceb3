/**
 * Incoming calls on WhatsApp (DECISIONS 16): the library's `call` updates turned into the seam's `incoming_call`,
 * and rejecting one.
 *
 * Owns: which updates are a call to announce (an `offer` heard live; the other states of a call, and offers the
 * server replays from while the device was offline, are over or not new), the caller as a number (or its LID form
 * when no number is known, as for incoming messages), and the address a rejection goes to.
 * Must never: announce one call twice, or reject a call it was not told of.
 */
import type { WACallEvent } from 'baileys';
import type { IncomingCall, NetworkEvent } from '../network.js';
import { addressJid, senderOf } from './lid.js';
import type { SocketPort } from './socket-port.js';

/** The calls among the library's updates the gateway announces, in order. */
export function incomingCalls(updates: ReadonlyArray<WACallEvent>): IncomingCall[] {
  const calls: IncomingCall[] = [];
  for (const update of updates) {
    if (update.status !== 'offer' || update.offline) continue;
    const caller = senderOf(update.from, update.callerPn);
    if (caller === null) continue;
    calls.push({
      id: update.id,
      from: caller.from,
      ...(caller.fromLid === undefined ? {} : { fromLid: caller.fromLid }),
      video: update.isVideo === true,
      ...(update.isGroup === true && update.groupJid !== undefined ? { group: update.groupJid } : {}),
    });
  }
  return calls;
}

/** Tells `emit` of each call among the library's updates that the gateway announces. */
export function announceCalls(updates: ReadonlyArray<WACallEvent>, emit: (event: NetworkEvent) => void): void {
  for (const call of incomingCalls(updates)) emit({ type: 'incoming_call', ...call });
}

/** Declines the call on the network, addressed to the caller as the offer named them. */
export async function rejectCall(socket: SocketPort, call: IncomingCall): Promise<void> {
  await socket.rejectCall(call.id, addressJid(call.fromLid ?? call.from));
}
