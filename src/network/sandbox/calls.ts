/**
 * Phones calling devices in the sandbox (DECISIONS 16): a phone calls the device holding a session, alone or in a
 * group call; the device may reject the call.
 *
 * Owns: the call's id and its life as the calling phone sees it (`ringing`, then `rejected` when the device rejects
 * it), kept in the phone's `calls` list (PhoneRecord.seeCall), and the `incoming_call` event the device gets.
 * Must never: ring a device that is not connected (a real network only offers a call to a device online), or let a
 * device reject a call made to another device.
 */
import { randomBytes } from 'node:crypto';
import type { IncomingCall, NetworkGroupId, PhoneNumber } from '../network.js';
import type { RecipientScope, SandboxCall } from '../sandbox-control.js';
import { SandboxControlError } from '../sandbox-control.js';
import { isGroupId } from './messaging.js';
import { isWellFormedPhone, SHARED_VIEW, type PhoneView } from './phones.js';
import type { Link, WorldState } from './state.js';

export function callFromPhone(
  world: WorldState,
  phone: PhoneNumber,
  call: { video?: unknown; group?: unknown },
  recipient: RecipientScope,
  view: PhoneView = SHARED_VIEW,
): SandboxCall {
  if (!isWellFormedPhone(phone)) throw new SandboxControlError(400, 'Invalid phone number format');
  if (call.video !== undefined && typeof call.video !== 'boolean') {
    throw new SandboxControlError(400, 'Invalid call', 'video must be true or false');
  }
  const group = call.group;
  if (group !== undefined && (typeof group !== 'string' || !isGroupId(group))) {
    throw new SandboxControlError(400, 'Invalid call', 'group must be a group id (…@g.us)');
  }
  if (!world.phone(phone).in(view).registered) {
    throw new SandboxControlError(400, 'Phone number is not registered', `${phone} has no account on the network`);
  }
  const session = world.sessions.get(recipient?.session ?? '');
  if (session === undefined) throw new SandboxControlError(404, 'Device not found', 'no device holds that session');
  const link = session.link;
  if (link?.state !== 'open' || link.phone === null) {
    throw new SandboxControlError(409, 'Device not connected', 'a call rings only a device that is online');
  }
  const placed: SandboxCall = {
    id: randomBytes(8).toString('hex').toUpperCase(),
    to: link.phone,
    video: call.video === true,
    ...(group === undefined ? {} : { group_id: group as NetworkGroupId }),
    status: 'ringing',
    at: new Date().toISOString(),
  };
  world.phone(phone).seeCall(placed, view);
  const event: IncomingCall = {
    id: placed.id,
    from: phone,
    video: placed.video,
    ...(placed.group_id === undefined ? {} : { group: placed.group_id }),
  };
  world.emit(link, { type: 'incoming_call', ...event });
  return placed;
}

/** The device rejects a call made to it; the caller's record says so. A call unknown or not to it: nothing. */
export function rejectCall(world: WorldState, link: Link, call: IncomingCall): void {
  const self = world.requireOpen(link);
  world.phones.get(call.from)?.rejectCall(call.id, self);
}
