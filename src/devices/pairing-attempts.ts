/**
 * The waiting parts of a pairing attempt (docs/internals.md, Devices and pairing): a caller waiting for the
 * attempt's first QR code, and a pairing code asked of the network, each no longer than the QR wait.
 *
 * Owns: QrUnavailableError and the two waits. Must never: start or end an attempt, or change its state other
 * than registering a waiter on it (the connection manager does, through src/devices/connection-state.ts).
 */
import type { NetworkConnection } from '../network/network.js';
import type { Pairing, QrWaiter } from './connection-state.js';

export class QrUnavailableError extends Error {
  constructor(
    message: string,
    /** Set when the pairing attempt was ended on purpose (a logout, deletion or suspension) while waiting. */
    readonly endedBy: 'release' | null = null,
  ) {
    super(message);
  }
}

/** The attempt's first QR code, or QrUnavailableError after `waitMs` or when the attempt ends first. */
export function firstQr(attempt: Pairing, waitMs: number): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    const waiter: QrWaiter = {
      resolve,
      reject,
      timer: setTimeout(() => {
        const at = attempt.waiters.indexOf(waiter);
        if (at >= 0) attempt.waiters.splice(at, 1);
        reject(new QrUnavailableError('the network sent no QR code in time'));
      }, waitMs),
    };
    attempt.waiters.push(waiter);
  });
}

/** A pairing code for `phone` from the attempt's connection, or QrUnavailableError after `waitMs`. */
export async function pairingCodeOf(conn: NetworkConnection, phone: string, waitMs: number): Promise<string> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      conn.requestPairingCode(phone),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new QrUnavailableError('the network sent no pairing code in time')), waitMs);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
