/**
 * Pairing and session life in the sandbox: QR codes that rotate, scans,
 * reconnects with a stored session, replacement, drops and log-outs.
 *
 * Owns: the transitions of a link (pairing → open, connecting → open, any →
 * closed) and the issuing and ending of sessions. Must never: emit an event
 * synchronously inside connect() (the gateway has not stored the connection
 * yet), or keep more than one timer per link.
 */
import { randomBytes } from 'node:crypto';
import {
  NetworkUnavailableError,
  type ConnectOptions,
  type NetworkEventHandler,
  type PhoneNumber,
} from '../network.js';
import { SandboxControlError, type ScanScope } from '../sandbox-control.js';
import { offerHistory } from './history.js';
import { isWellFormedPhone, viewOf } from './phones.js';
import type { Link, WorldState } from './state.js';

/** Same shape as a WhatsApp pairing code: `2@<ref>,<noise key>,<identity key>,<secret>`, about 150 characters. */
export function newQrText(): string {
  const b64 = (n: number) => randomBytes(n).toString('base64');
  return `2@${b64(24)},${b64(32)},${b64(32)},${b64(16)}`;
}

export function openLink(world: WorldState, options: ConnectOptions, sink: NetworkEventHandler): Link {
  const link = world.createLink(options.deviceId, viewOf(options.view), sink);
  if (link.state === 'closed') return link;
  if (options.session === null) {
    link.state = 'pairing';
    link.expectedPhone = options.expectedPhone ?? null;
    link.timer = world.later(0, () => rotateQr(world, link));
    return link;
  }
  const session = world.sessions.get(options.session);
  if (!session) {
    link.timer = world.later(0, () =>
      world.endLink(link, { type: 'logged_out', reason: 'session is no longer valid' }),
    );
    return link;
  }
  // One connection per session, like the real network: the newest wins.
  if (session.link) {
    world.replaced.set(session.phone, (world.replaced.get(session.phone) ?? 0) + 1);
    world.endLink(session.link, { type: 'disconnected', reason: 'replaced' });
  }
  session.link = link;
  link.session = session.token;
  link.phone = session.phone;
  link.timer = world.later(0, () => {
    link.timer = null;
    if (link.state !== 'connecting') return;
    link.state = 'open';
    world.emit(link, { type: 'connected', phone: session.phone });
    world.flushQueue(session);
  });
  return link;
}

function rotateQr(world: WorldState, link: Link): void {
  if (link.state !== 'pairing') return;
  if (link.qr !== null) world.qrs.delete(link.qr);
  link.qr = newQrText();
  world.qrs.set(link.qr, link);
  const times = world.qrRotateMs;
  link.timer = world.later(times[Math.min(link.qrShown, times.length - 1)]!, () => rotateQr(world, link));
  link.qrShown += 1;
  world.emit(link, { type: 'qr', qr: link.qr });
}

export function scan(
  world: WorldState,
  qr: string,
  phone: PhoneNumber,
  scope?: ScanScope,
): { device_phone: PhoneNumber } {
  if (!isWellFormedPhone(phone)) throw new SandboxControlError(400, 'Invalid phone number format');
  const link = typeof qr === 'string' ? world.qrs.get(qr) : undefined;
  if (!link || link.state !== 'pairing') throw new SandboxControlError(400, 'Invalid QR code');
  // Someone else's code is as unknown to the caller as a made-up one.
  if (scope !== undefined && !scope.deviceIds.includes(link.deviceId)) {
    throw new SandboxControlError(400, 'Invalid QR code');
  }
  return completePairing(world, link, phone);
}

/** Letters and digits of a WhatsApp pairing code: no 0, O, I or U, which are easily misread. */
const CODE_ALPHABET = '123456789ABCDEFGHJKLMNPQRSTVWXYZ';

function newPairingCode(): string {
  const bytes = randomBytes(8);
  const chars = [...bytes].map((b) => CODE_ALPHABET[b % CODE_ALPHABET.length]).join('');
  return `${chars.slice(0, 4)}-${chars.slice(4)}`;
}

/**
 * The device asks for a pairing code for `phone` (instead of showing a QR). Like the real network,
 * the code is bound to that number; asking again replaces the earlier code.
 */
export function requestPairingCode(world: WorldState, link: Link, phone: PhoneNumber): string {
  if (link.state !== 'pairing') throw new NetworkUnavailableError('no pairing attempt is running on this connection');
  if (!isWellFormedPhone(phone)) throw new SandboxControlError(400, 'Invalid phone number format');
  if (link.pairingCode !== null) world.pairingCodes.delete(link.pairingCode.code);
  const code = newPairingCode();
  link.pairingCode = { code, phone };
  world.pairingCodes.set(code, link);
  return code;
}

/** The phone's user types the code into the linked-devices screen (`POST /sandbox/pair`). */
export function pairWithCode(
  world: WorldState,
  code: string,
  phone: PhoneNumber,
  scope?: ScanScope,
): { device_phone: PhoneNumber } {
  if (!isWellFormedPhone(phone)) throw new SandboxControlError(400, 'Invalid phone number format');
  const typed = typeof code === 'string' ? code.trim().toUpperCase() : '';
  const link = world.pairingCodes.get(typed);
  // Someone else's code is as unknown to the caller as a made-up one.
  if (!link || link.state !== 'pairing' || link.pairingCode === null || outside(scope, link.deviceId)) {
    throw new SandboxControlError(400, 'Invalid pairing code');
  }
  if (link.pairingCode.phone !== phone) {
    throw new SandboxControlError(400, 'Phone number mismatch', `this code was made for ${link.pairingCode.phone}`);
  }
  return completePairing(world, link, phone);
}

function outside(scope: ScanScope | undefined, deviceId: number): boolean {
  return scope !== undefined && !scope.deviceIds.includes(deviceId);
}

function completePairing(world: WorldState, link: Link, phone: PhoneNumber): { device_phone: PhoneNumber } {
  if (link.expectedPhone !== null && link.expectedPhone !== phone) {
    throw new SandboxControlError(
      400,
      'Phone number mismatch',
      `this device must be paired from ${link.expectedPhone}`,
    );
  }
  if (!world.phone(phone).in(link.view).registered) {
    throw new SandboxControlError(400, 'Phone number is not registered', `${phone} has no account on the network`);
  }
  const token = `sbx1.${randomBytes(32).toString('base64url')}`;
  world.sessions.set(token, { token, phone, link, queue: [] });
  if (link.qr !== null) world.qrs.delete(link.qr);
  if (link.pairingCode !== null) world.pairingCodes.delete(link.pairingCode.code);
  link.pairingCode = null;
  world.cancel(link.timer);
  link.timer = null;
  link.qr = null;
  link.session = token;
  link.phone = phone;
  link.state = 'open';
  world.changed();
  world.emit(link, { type: 'paired', phone, session: token });
  world.emit(link, { type: 'connected', phone });
  // Only a pairing offers the number's history, never a reconnect (history.ts).
  offerHistory(world, link, phone);
  return { device_phone: phone };
}

export function disconnectDevice(world: WorldState, deviceId: number, logout: boolean): void {
  const targets = [...world.links].filter((l) => l.deviceId === deviceId && l.state !== 'closed');
  if (targets.length === 0) throw new SandboxControlError(404, 'Device not connected');
  for (const link of targets) {
    if (logout && link.session !== null) world.endSession(link.session, 'logged out from the phone');
    else if (logout) world.endLink(link, { type: 'logged_out', reason: 'logged out from the phone' });
    else world.endLink(link, { type: 'disconnected', reason: 'connection dropped by the network' });
  }
}

/** The device itself ends its session (connection.logout()). */
export function logoutLink(world: WorldState, link: Link): void {
  world.requireOpen(link);
  if (link.session !== null) world.endSession(link.session, 'logged out by the device');
}
