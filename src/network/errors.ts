/**
 * The failures a network reports through the seam (network.ts re-exports them, so callers name one module).
 *
 * Owns: the error classes a connection's methods reject with, and what each means to the gateway.
 * Must never: import anything but plain values, or hold behaviour beyond their fields.
 */
import type { GroupSettingName } from './values.js';

/**
 * Why a send did not go through. `transient` failures are retried by the gateway
 * (same id); `permanent` ones end the message as failed.
 */
export class NetworkSendError extends Error {
  constructor(
    message: string,
    readonly kind: 'transient' | 'permanent',
  ) {
    super(message);
    this.name = 'NetworkSendError';
  }
}

/** The connection is not open (never connected, dropped, or logged out). Transient from the sender's view. */
export class NetworkUnavailableError extends Error {
  constructor(message = 'device is not connected to the network') {
    super(message);
    this.name = 'NetworkUnavailableError';
  }
}

/** Incoming media could not be downloaded; `permanent` when trying again cannot help (gone, refused, corrupt). */
export class NetworkMediaError extends Error {
  constructor(
    message: string,
    readonly kind: 'transient' | 'permanent',
  ) {
    super(message);
    this.name = 'NetworkMediaError';
  }
}

/** The acting device is not allowed to do this to the group (not an admin). */
export class NetworkForbiddenError extends Error {
  constructor(message = 'not an administrator of the group') {
    super(message);
    this.name = 'NetworkForbiddenError';
  }
}

/** The group does not exist, or the device is not a member of it. */
export class NetworkNotFoundError extends Error {
  constructor(message = 'group not found') {
    super(message);
    this.name = 'NetworkNotFoundError';
  }
}

/**
 * The network refused one change of an `updateGroup` call after it had applied others (`applied`), or
 * refused a change for a reason other than the device's rights. Changes after it were not tried.
 */
export class NetworkSettingRefusedError extends Error {
  constructor(
    readonly setting: GroupSettingName,
    readonly applied: readonly GroupSettingName[],
    message: string,
  ) {
    super(message);
    this.name = 'NetworkSettingRefusedError';
  }
}
