/**
 * Groups of the account's devices (docs/internals.md, Groups): list, look up, create,
 * update, send to; and what every group route shares: finding the group and
 * its acting device, and asking the network about it.
 *
 * Owns: the rules of group management (the group's device is the one that
 * acts; it must exist, not be suspended and be connected; the network's
 * refusals become `Group not found` / `Access denied`) and refreshing the
 * stored snapshot after each change the gateway makes.
 * Must never: know about HTTP or write SQL; member addition, with its limits,
 * is in members.ts.
 */
import type { Clock } from '../clock.js';
import type { DeviceRow } from '../devices/repository.js';
import { devicesRepository } from '../devices/repository.js';
import { ApiError } from '../errors.js';
import { isPhoneNumber } from '../shapes.js';
import type { SendAnswer } from '../messages/acceptance.js';
import {
  NetworkForbiddenError,
  NetworkNotFoundError,
  NetworkSettingRefusedError,
  NetworkUnavailableError,
  type NetworkConnection,
  type NetworkGroup,
} from '../network/network.js';
import type { Store } from '../store/store.js';
import { failure } from './failures.js';
import {
  presentGroup,
  presentGroupDetail,
  type CreatedGroupJson,
  type GroupDetailJson,
  type GroupJson,
} from './present.js';
import { findGroup } from './lookup.js';
import { groupsRepository, type GroupWithDevice } from './repository.js';
import { SETTING_FIELDS, groupChanges, type UpdateGroupInput } from './settings.js';
import { snapshotOf } from './snapshot.js';

/** The live connections, as group rules need them. */
export interface GroupConnections {
  connection(deviceId: number): NetworkConnection | null;
}

/** Finding a device by its number (the messages' cached directory). */
export interface GroupDeviceDirectory {
  findByPhone(accountId: number, phone: string): Promise<DeviceRow | undefined>;
}

/** Accepting a group message: the message service's group path. */
export interface GroupMessageSender {
  sendToGroup(
    accountId: number,
    body: unknown,
    group: { readonly deviceId: number; readonly devicePhone: string | null; readonly networkId: string },
    idempotencyKey: string | undefined,
  ): Promise<SendAnswer>;
}

/** Storing the network's view of one group, in order with every other sync of the device (sync.ts). */
export interface GroupRefresher {
  refresh(deviceId: number, networkId: string): Promise<GroupWithDevice | null>;
}

export interface GroupsServiceOptions {
  readonly store: Store;
  readonly sync: GroupRefresher;
  readonly clock: Clock;
  readonly connections: GroupConnections;
  readonly devices: GroupDeviceDirectory;
  readonly messages: GroupMessageSender;
}

/** A group, its device and that device's open connection: everything a group change needs. */
export interface Acting {
  readonly group: GroupWithDevice;
  readonly device: DeviceRow;
  readonly conn: NetworkConnection;
}

export interface CreateGroupInput {
  readonly device: string;
  readonly name: string;
  readonly participants: readonly string[];
}

export type { UpdateGroupInput } from './settings.js';

const PHONE_RULE = 'must be a phone number in international format: digits only, country code first, no +';

export class GroupsService {
  constructor(private readonly options: GroupsServiceOptions) {}

  async list(
    accountId: number,
    query: { device?: string; page: number; per_page: number },
  ): Promise<{ data: GroupJson[]; total: number }> {
    let deviceId: number | undefined;
    if (query.device !== undefined) {
      if (!isPhoneNumber(query.device)) throw new ApiError('INVALID_PHONE', { errors: { device: [PHONE_RULE] } });
      const device = await this.options.devices.findByPhone(accountId, query.device);
      if (device === undefined) throw new ApiError('DEVICE_NOT_FOUND');
      deviceId = device.id;
    }
    const { db } = this.options.store;
    const offset = (query.page - 1) * query.per_page;
    const [rows, total] = await Promise.all([
      groupsRepository.page(db, accountId, deviceId, query.per_page, offset),
      groupsRepository.count(db, accountId, deviceId),
    ]);
    return { data: rows.map((row) => presentGroup(row, row.device_phone)), total };
  }

  async get(accountId: number, id: number): Promise<GroupDetailJson> {
    const row = await this.find(accountId, id);
    return presentGroupDetail(row, row.device_phone);
  }

  /** Creates the group; the answer names each requested participant the network left out, and why. */
  async create(accountId: number, input: CreateGroupInput): Promise<CreatedGroupJson> {
    const malformed = input.participants.flatMap((phone, i) => (isPhoneNumber(phone) ? [] : [i]));
    if (malformed.length > 0) {
      throw new ApiError('INVALID_PHONE', {
        errors: Object.fromEntries(malformed.map((i) => [`participants.${i}`, [PHONE_RULE]])),
      });
    }
    const device = await this.options.devices.findByPhone(accountId, input.device);
    if (device === undefined) throw new ApiError('DEVICE_NOT_FOUND');
    const conn = this.usableConnection(device);
    const participants = [...new Set(input.participants)].filter((phone) => phone !== device.phone);
    const created = await conn.createGroup(input.name, participants).catch(networkRefusal);
    const { notAdded, ...group } = created;
    const row = await this.stored(device, group);
    return {
      ...presentGroupDetail(row, device.phone),
      failed_participants: notAdded.map((left) => failure(left.phone, left.code)),
    };
  }

  /**
   * Changes the group on the network (subject, description, permissions, disappearing messages). The
   * network applies them in order and stops at a refusal: a refused setting is 400 `Group setting
   * refused` naming its field, with what was changed before it; nothing is ever answered as done that
   * the network did not do.
   */
  async update(accountId: number, id: number, input: UpdateGroupInput): Promise<GroupDetailJson> {
    const asked = groupChanges(input);
    if ('errors' in asked) throw new ApiError('VALIDATION_FAILED', { errors: asked.errors });
    const acting = await this.acting(accountId, id);
    let updated: NetworkGroup;
    try {
      updated = await acting.conn.updateGroup(acting.group.network_id, asked.changes);
    } catch (error) {
      if (!(error instanceof NetworkSettingRefusedError)) return this.refused(acting, error);
      // What the network did change is stored before answering, so GET shows the group as it is.
      await this.options.sync.refresh(acting.device.id, acting.group.network_id).catch(() => undefined);
      const applied = error.applied.map((name) => SETTING_FIELDS[name]);
      throw new ApiError('GROUP_SETTING_REFUSED', {
        error: applied.length === 0 ? 'nothing was changed' : `changed before the refusal: ${applied.join(', ')}`,
        errors: { [SETTING_FIELDS[error.setting]]: [error.message] },
      });
    }
    const row = await this.stored(acting.device, updated);
    return presentGroupDetail(row, acting.device.phone);
  }

  /**
   * The numeric id of the group a route names (`{group_id}`: the numeric id or the group's JID; with a
   * JID, `device` picks among the account's devices in the group). 404 `Group not found` otherwise.
   */
  async resolve(accountId: number, ref: string, device?: unknown): Promise<number> {
    const row = await findGroup(this.options.store.db, accountId, ref, typeof device === 'string' ? device : undefined);
    return row.id;
  }

  async send(accountId: number, id: number, body: unknown, idempotencyKey: string | undefined): Promise<SendAnswer> {
    const group = await this.find(accountId, id);
    return this.options.messages.sendToGroup(
      accountId,
      body,
      { deviceId: group.device_id, devicePhone: group.device_phone, networkId: group.network_id },
      idempotencyKey,
    );
  }

  // --- shared by the group routes and members.ts ---------------------------------------

  /** The group of this account (404 otherwise) with its device and that device's open connection. */
  async acting(accountId: number, id: number): Promise<Acting> {
    const group = await this.find(accountId, id);
    const device = await devicesRepository.findById(this.options.store.db, group.device_id);
    if (device === undefined || device.deleted_at !== null) throw new ApiError('GROUP_NOT_FOUND');
    return { group, device, conn: this.usableConnection(device) };
  }

  /** The account's device with this number (404 `Device not found`), for a change that names its device. */
  async deviceOf(accountId: number, phone: string): Promise<DeviceRow> {
    if (!isPhoneNumber(phone)) throw new ApiError('INVALID_PHONE', { errors: { device: [PHONE_RULE] } });
    const device = await this.options.devices.findByPhone(accountId, phone);
    if (device === undefined) throw new ApiError('DEVICE_NOT_FOUND');
    return device;
  }

  /** The group as the network sees it now. */
  async fetch(acting: Acting): Promise<NetworkGroup> {
    return acting.conn.getGroup(acting.group.network_id).catch((error: unknown) => this.refused(acting, error));
  }

  /**
   * The group as stored after a change this gateway made: refreshed through
   * the device's sync order; if the network cannot be asked again right now,
   * what the change itself answered is stored (the next sync corrects it).
   */
  async stored(device: DeviceRow, changed: NetworkGroup): Promise<GroupWithDevice> {
    const refreshed = await this.options.sync.refresh(device.id, changed.id).catch(() => undefined);
    if (refreshed === null) throw new ApiError('GROUP_NOT_FOUND', { error: 'the device is no longer in the group' });
    if (refreshed !== undefined) return refreshed;
    const snapshot = snapshotOf(changed, device.phone);
    const { db } = this.options.store;
    const row = await groupsRepository.upsert(db, device.account_id, device.id, snapshot, this.options.clock.now());
    return { ...row, device_phone: device.phone };
  }

  /**
   * A network refusal of a change to a known group, as the API answers it. A
   * group the network no longer shows to the device is marked left first, so
   * it disappears from the list too.
   */
  async refused(acting: Acting, error: unknown): Promise<never> {
    if (error instanceof NetworkNotFoundError) {
      await groupsRepository.markLeft(
        this.options.store.db,
        acting.device.id,
        [acting.group.network_id],
        this.options.clock.now(),
      );
    }
    return networkRefusal(error);
  }

  private async find(accountId: number, id: number): Promise<GroupWithDevice> {
    const row = await groupsRepository.find(this.options.store.db, accountId, id);
    if (row === undefined) throw new ApiError('GROUP_NOT_FOUND');
    return row;
  }

  usableConnection(device: DeviceRow): NetworkConnection {
    if (device.status === 'SUSPENDED') throw new ApiError('DEVICE_SUSPENDED');
    const conn = this.options.connections.connection(device.id);
    if (conn === null) throw new ApiError('DEVICE_NOT_CONNECTED');
    return conn;
  }
}

/** The API error for a network refusal; anything that is not a refusal is passed on as it is. */
export function networkRefusal(error: unknown): never {
  if (error instanceof NetworkNotFoundError) throw new ApiError('GROUP_NOT_FOUND');
  if (error instanceof NetworkForbiddenError) {
    throw new ApiError('ACCESS_DENIED', { error: 'the device is not an administrator of the group' });
  }
  if (error instanceof NetworkUnavailableError) throw new ApiError('DEVICE_NOT_CONNECTED');
  throw error;
}
