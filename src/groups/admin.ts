/**
 * Administering a group (DECISIONS 16): removing, promoting and demoting members, the invite link, joining by a
 * link or its code, and leaving.
 *
 * Owns: the order of checks (participants 400 → group 404 → device 400 → admin 403), the per-participant answer
 * `{succeeded, failed}`, the invite link's form (`https://chat.whatsapp.com/<code>`), and the events these changes
 * record (`group.participants_removed|promoted|demoted`, `group.joined`, `group.left`), the group's picture, each recorded after the
 * group's new snapshot is stored, so a client that reads the group on the event already sees the change.
 * Must never: answer a change as made that the network did not make, hold a transaction while the network works,
 * or write SQL itself.
 */
import type { Clock } from '../clock.js';
import type { DeviceRow } from '../devices/repository.js';
import { devicesRepository } from '../devices/repository.js';
import { recordEvent } from '../events/record.js';
import type { EventType } from '../events/types.js';
import { ApiError } from '../errors.js';
import type { ParticipantAction, ParticipantChangeErrorCode } from '../network/network.js';
import { isPhoneNumber } from '../shapes.js';
import type { Store } from '../store/store.js';
import { readPictureUrl, type PictureFetcher } from '../contacts/picture.js';
import { groupRef } from './changes.js';
import { readParticipants } from './members.js';
import { presentGroupDetail, type GroupDetailJson } from './present.js';
import type { GroupWithDevice } from './repository.js';
import { groupsRepository } from './repository.js';
import { networkRefusal, type Acting, type GroupRefresher, type GroupsService } from './service.js';

export const INVITE_LINK_PREFIX = 'https://chat.whatsapp.com/';

/** An invite code as the network hands them out: URL-safe letters and digits. */
const INVITE_CODE = /^[A-Za-z0-9_-]{6,64}$/;

const ACTIONS: Record<ParticipantAction, { message: string; event: EventType }> = {
  remove: { message: 'Members removed', event: 'group.participants_removed' },
  promote: { message: 'Members promoted', event: 'group.participants_promoted' },
  demote: { message: 'Members demoted', event: 'group.participants_demoted' },
};

export interface ParticipantsChangeResult {
  readonly succeeded: string[];
  readonly failed: Array<{ phone: string; error_code: ParticipantChangeErrorCode }>;
}

export interface GroupAdminOptions {
  readonly store: Store;
  readonly clock: Clock;
  readonly groups: GroupsService;
  readonly sync: GroupRefresher;
  /** Fetches a picture named by URL (`PUT /groups/{id}/picture`). */
  readonly pictures: PictureFetcher;
}

export class GroupAdminService {
  constructor(private readonly options: GroupAdminOptions) {}

  /** `POST /groups/{id}/members/remove|promote|demote {participants}`. */
  async changeMembers(
    accountId: number,
    groupId: number,
    action: ParticipantAction,
    body: unknown,
  ): Promise<{ message: string; data: ParticipantsChangeResult }> {
    const participants = readParticipants(body);
    const acting = await this.admin(accountId, groupId);
    const wellFormed = participants.filter(isPhoneNumber);
    const outcomes =
      wellFormed.length === 0
        ? []
        : await acting.conn
            .changeParticipants(acting.group.network_id, wellFormed, action)
            .catch((error: unknown) => this.options.groups.refused(acting, error));
    const byPhone = new Map(outcomes.map((o) => [o.phone, o] as const));
    const data: ParticipantsChangeResult = { succeeded: [], failed: [] };
    for (const phone of participants) {
      const outcome = byPhone.get(phone);
      if (!isPhoneNumber(phone)) data.failed.push({ phone, error_code: 'INVALID_NUMBER' });
      else if (outcome === undefined) data.failed.push({ phone, error_code: 'NOT_A_MEMBER' });
      else if (outcome.ok) data.succeeded.push(phone);
      else data.failed.push({ phone, error_code: outcome.code });
    }
    if (data.succeeded.length > 0) {
      const row = await this.refreshed(acting);
      await this.record(acting.device, ACTIONS[action].event, {
        ...groupRef(row ?? acting.group),
        participants: data.succeeded,
        by: acting.device.phone,
      });
    }
    return { message: ACTIONS[action].message, data };
  }

  /** `GET /groups/{id}/invite-link`, and `POST /groups/{id}/invite-link/revoke` (`revoke`: a new link). */
  async inviteLink(accountId: number, groupId: number, revoke: boolean): Promise<{ invite_link: string }> {
    const acting = await this.admin(accountId, groupId);
    const code = await acting.conn
      .groupInvite(acting.group.network_id, revoke)
      .catch((error: unknown) => this.options.groups.refused(acting, error));
    return { invite_link: `${INVITE_LINK_PREFIX}${code}` };
  }

  /** `POST /groups/join {device, invite}`: the device joins the group a link (or its bare code) opens. */
  async join(accountId: number, body: unknown): Promise<GroupDetailJson> {
    const { device: phone, code } = readJoin(body);
    const device = await this.options.groups.deviceOf(accountId, phone);
    const conn = this.options.groups.usableConnection(device);
    const joined = await conn.joinGroup(code).catch((error: unknown) => {
      try {
        return networkRefusal(error);
      } catch (refusal) {
        if (refusal instanceof ApiError && refusal.code === 'GROUP_NOT_FOUND') {
          throw new ApiError('GROUP_NOT_FOUND', { error: 'the invite opens no group (unknown or revoked)' });
        }
        throw refusal;
      }
    });
    const row = await this.options.groups.stored(device, joined);
    await this.record(device, 'group.joined', { ...groupRef(row), by: device.phone });
    return presentGroupDetail(row, device.phone);
  }

  /** `POST /groups/{id}/leave`: the device leaves; the group leaves the list. */
  async leave(accountId: number, groupId: number): Promise<void> {
    const acting = await this.options.groups.acting(accountId, groupId);
    await acting.conn
      .leaveGroup(acting.group.network_id)
      .catch((error: unknown) => this.options.groups.refused(acting, error));
    const now = this.options.clock.now();
    await groupsRepository.markLeft(this.options.store.db, acting.device.id, [acting.group.network_id], now);
    await this.record(acting.device, 'group.left', { ...groupRef(acting.group), by: acting.device.phone });
  }

  /**
   * `PUT /groups/{id}/picture {url}`: the picture fetched (JPEG or PNG) and set on the network by an administrator.
   * The sync that stores the group afterwards records `group.updated` (sync.ts), once, with `picture: "changed"`.
   */
  async setPicture(accountId: number, groupId: number, body: unknown): Promise<GroupDetailJson> {
    const fields = typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {};
    const url = readPictureUrl(fields.url, 'url');
    const acting = await this.admin(accountId, groupId);
    const picture = await this.options.pictures.fetch(url);
    await acting.conn
      .setGroupPicture(acting.group.network_id, picture)
      .catch((error: unknown) => this.options.groups.refused(acting, error));
    const row = await this.refreshed(acting);
    return presentGroupDetail(row ?? acting.group, acting.device.phone);
  }

  /** The group's device, checked to be an administrator as the network sees the group now (403 otherwise). */
  private async admin(accountId: number, groupId: number): Promise<Acting> {
    const acting = await this.options.groups.acting(accountId, groupId);
    const current = await this.options.groups.fetch(acting);
    const self = current.participants.find((p) => p.phone === acting.device.phone);
    if (self === undefined || self.role === null) {
      throw new ApiError('ACCESS_DENIED', { error: 'the device is not an administrator of the group' });
    }
    return acting;
  }

  /** The group as stored after the change, through the device's sync order; null when it could not be read. */
  private refreshed(acting: Acting): Promise<GroupWithDevice | null> {
    return this.options.sync.refresh(acting.device.id, acting.group.network_id).catch(() => null);
  }

  private async record(device: DeviceRow, type: EventType, data: Record<string, unknown>): Promise<void> {
    await this.options.store.db.transaction().execute(async (trx) => {
      const current = await devicesRepository.findById(trx, device.id);
      if (current === undefined) return;
      await recordEvent(trx, current, type, data, this.options.clock.now());
    });
  }
}

/** `{device, invite}`: the device's number, and an invite link or its bare code; else 400 naming the field. */
export function readJoin(body: unknown): { device: string; code: string } {
  const fields = typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {};
  const errors: Record<string, string[]> = {};
  if (typeof fields.device !== 'string') errors.device = ['is required: the number of the device that joins'];
  const invite = typeof fields.invite === 'string' ? fields.invite.trim() : undefined;
  const code = invite?.startsWith(INVITE_LINK_PREFIX) ? invite.slice(INVITE_LINK_PREFIX.length) : invite;
  if (code === undefined || !INVITE_CODE.test(code)) {
    errors.invite = [`is required: an invite link (${INVITE_LINK_PREFIX}…) or its code`];
  }
  if (Object.keys(errors).length > 0) throw new ApiError('VALIDATION_FAILED', { errors });
  return { device: fields.device as string, code: code as string };
}
