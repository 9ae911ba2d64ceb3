/**
 * Which group a client means (docs/internals.md, Whatspie compatibility): the one place where a `{group_id}` written as the
 * gateway's numeric id or as the group's network id (its JID, `…@g.us`), and a group JID given as a
 * message's `receiver`, become a stored group of the account.
 *
 * Owns: the forms a group may be named in, and choosing among the account's devices in one group
 * (a JID names the group, not the device: several of the account's devices may be in it).
 * Must never: decide what may be done to the group (service.ts), or find a group of another account,
 * one its device has left, or one of a deleted device.
 */
import { ApiError } from '../errors.js';
import { GROUP_JID_PATTERN } from '../shapes.js';
import type { Db } from '../store/schema.js';
import { groupsRepository, type GroupWithDevice } from './repository.js';

export { GROUP_REF_PATTERN } from '../shapes.js';

export const isGroupJid = (value: unknown): value is string =>
  typeof value === 'string' && GROUP_JID_PATTERN.test(value);

export const SEVERAL_DEVICES = 'several of this account’s devices are in this group: give the number of the one to act';

/**
 * The account's group named by `ref` (already of GROUP_REF_PATTERN's form). With a JID and several of
 * the account's devices in the group, `device` (a phone number, when the request gives one) picks one;
 * without it that is a 400 naming `device`. Unknown: 404 `Group not found`.
 */
export async function findGroup(db: Db, accountId: number, ref: string, device?: string): Promise<GroupWithDevice> {
  if (!isGroupJid(ref)) {
    const id = Number(ref);
    const row = Number.isSafeInteger(id) ? await groupsRepository.find(db, accountId, id) : undefined;
    if (row === undefined) throw new ApiError('GROUP_NOT_FOUND');
    return row;
  }
  const rows = await groupsRepository.findByNetworkId(db, accountId, ref);
  const candidates = typeof device === 'string' && device !== '' ? rows.filter((r) => r.device_phone === device) : rows;
  if (candidates.length === 0) throw new ApiError('GROUP_NOT_FOUND');
  if (candidates.length > 1) throw new ApiError('VALIDATION_FAILED', { errors: { device: [SEVERAL_DEVICES] } });
  return candidates[0]!;
}

/** The device's group with this JID, when the device is in it (a message's group `receiver`). */
export async function deviceGroup(
  db: Db,
  accountId: number,
  deviceId: number,
  jid: string,
): Promise<GroupWithDevice | undefined> {
  const rows = await groupsRepository.findByNetworkId(db, accountId, jid, deviceId);
  return rows[0];
}
