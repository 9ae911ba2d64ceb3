/**
 * A device's presence and typing (issue 26; DECISIONS 15, Presence; docs/api.md, Presence and typing):
 * `POST /devices/{id}/presence {presence}` and `POST /devices/{id}/typing {to, state}`.
 *
 * Owns: the bodies' schemas, and what a request becomes: the account's device (404 `Device not found` for another
 * account's or an unknown one), connected (400 `Device not connected` otherwise, also when the connection drops
 * meanwhile), and a chat named the ways a message's receiver is: a phone number, a group's JID, or the gateway's
 * numeric id of one of this device's groups (404 `Group not found` otherwise). The routes themselves are in
 * routes.ts (HTTP stays at the edge).
 * Must never: store anything (presence is told, not kept), or tell the network for a device of another account.
 */
import { Type, type Static } from '@sinclair/typebox';
import { ApiError } from '../errors.js';
import { findGroup } from '../groups/lookup.js';
import { NetworkSendError, NetworkUnavailableError, type NetworkConnection } from '../network/network.js';
import { PHONE_PATTERN } from '../phone-number.js';
import { GROUP_JID_PATTERN } from '../shapes.js';
import type { Store } from '../store/store.js';
import type { DeviceRow } from './repository.js';

export const PresenceBody = Type.Object({
  presence: Type.Union([Type.Literal('available'), Type.Literal('unavailable')], {
    description: '`available`: shown online; `unavailable`: offline (last seen)',
    examples: ['available'],
  }),
});

export const TypingBody = Type.Object({
  to: Type.String({
    minLength: 1,
    maxLength: 64,
    description:
      'The chat: a phone number, a group’s JID (`…@g.us`), or the gateway’s id of one of the device’s groups',
    examples: ['6281234567891'],
  }),
  state: Type.Union([Type.Literal('composing'), Type.Literal('recording'), Type.Literal('paused')], {
    description: '`composing`: typing…; `recording`: recording a voice note…; `paused`: stopped',
    examples: ['composing'],
  }),
});

export interface DevicePresenceOptions {
  readonly store: Store;
  readonly devices: { get(accountId: number, id: number): Promise<DeviceRow> };
  readonly connections: { connection(deviceId: number): NetworkConnection | null };
}

const NOT_A_CHAT = 'must be a phone number (country code first, digits only), a group JID or a group id';

export class DevicePresence {
  constructor(private readonly options: DevicePresenceOptions) {}

  async presence(accountId: number, deviceId: number, body: Static<typeof PresenceBody>): Promise<void> {
    const conn = await this.connected(accountId, deviceId);
    await told(() => conn.sendPresence(body.presence));
  }

  async typing(accountId: number, deviceId: number, body: Static<typeof TypingBody>): Promise<void> {
    const device = await this.options.devices.get(accountId, deviceId);
    const to = await this.chatOf(accountId, device, body.to);
    const conn = this.connectionOf(device);
    await told(() => conn.sendPresence(body.state, to));
  }

  private async connected(accountId: number, deviceId: number): Promise<NetworkConnection> {
    return this.connectionOf(await this.options.devices.get(accountId, deviceId));
  }

  private connectionOf(device: DeviceRow): NetworkConnection {
    const conn = this.options.connections.connection(device.id);
    if (conn === null) throw new ApiError('DEVICE_NOT_CONNECTED');
    return conn;
  }

  /** The chat as the network names it: a phone number or a group's JID. */
  private async chatOf(accountId: number, device: DeviceRow, to: string): Promise<string> {
    if (PHONE_PATTERN.test(to) || GROUP_JID_PATTERN.test(to)) return to;
    if (!/^[1-9][0-9]{0,15}$/.test(to)) throw new ApiError('VALIDATION_FAILED', { errors: { to: [NOT_A_CHAT] } });
    const group = await findGroup(this.options.store.db, accountId, to);
    if (Number(group.device_id) !== device.id || group.left_at !== null) throw new ApiError('GROUP_NOT_FOUND');
    return group.network_id;
  }
}

/** The network's refusals as answers: a dropped connection, or a chat the network does not take. */
async function told(work: () => Promise<void>): Promise<void> {
  try {
    await work();
  } catch (error) {
    if (error instanceof NetworkUnavailableError) throw new ApiError('DEVICE_NOT_CONNECTED');
    if (error instanceof NetworkSendError) throw new ApiError('VALIDATION_FAILED', { errors: { to: [error.message] } });
    throw error;
  }
}
