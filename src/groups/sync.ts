/**
 * Keeping the gateway's groups in step with the network (docs/internals.md, Groups).
 *
 * Owns: when groups are synced (every `connected`: the device's whole list;
 * every `groups_changed`: the groups it names) and what a sync writes (each
 * group's snapshot, upserted by (device, network id) so its gateway id never
 * changes; groups the device is no longer in are marked left). Work for one
 * device runs in order, one sync at a time, each reading the network and then
 * writing: so the last write is always of the latest read, and every snapshot
 * the gateway stores after its own changes (create, update, members add) goes
 * through here too (`refresh`).
 *
 * Also the one place that decides the events of a change seen on the network (docs/groups.md, Events): a sync
 * compares the stored snapshot with the network's and records `group.updated {group_id, changes}` when the
 * subject, description, settings or picture differ, in the transaction that stores the new snapshot. Whoever made
 * the change (another member, or this gateway's own PATCH), the first sync that stores it records the event and
 * every later one (the network's echo) finds nothing changed: one event per change. Participants removed,
 * promoted or demoted by someone else (the network names who: `groups_changed.detail`) are recorded here too;
 * the device's own are recorded by admin.ts, so a change the network says this device made is skipped here.
 * Must never: fail a connection (a failed background sync is logged and the
 * next event syncs again), run after close(), or write SQL itself.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../clock.js';
import { devicesRepository } from '../devices/repository.js';
import type { DeviceNetworkListener } from '../devices/connections.js';
import {
  NetworkNotFoundError,
  NetworkUnavailableError,
  type GroupChangeDetail,
  type NetworkConnection,
  type NetworkGroupId,
  type ParticipantAction,
} from '../network/network.js';
import type { Store } from '../store/store.js';
import { recordEvent } from '../events/record.js';
import type { EventType } from '../events/types.js';
import { groupChanges, groupRef } from './changes.js';
import { groupsRepository, type GroupWithDevice } from './repository.js';
import { snapshotOf } from './snapshot.js';

/** What sync needs from whatever holds the live connections. */
export interface SyncConnections {
  onEvent(listener: DeviceNetworkListener): () => void;
  connection(deviceId: number): NetworkConnection | null;
}

export interface GroupSyncOptions {
  readonly store: Store;
  readonly clock: Clock;
  readonly connections: SyncConnections;
  readonly logger: FastifyBaseLogger;
}

const PARTICIPANT_EVENTS: Record<ParticipantAction, EventType> = {
  remove: 'group.participants_removed',
  promote: 'group.participants_promoted',
  demote: 'group.participants_demoted',
};

/** Sync work asked for after close(). */
export class SyncClosedError extends Error {
  constructor() {
    super('group sync is closed');
    this.name = 'SyncClosedError';
  }
}

export class GroupSync {
  private readonly chains = new Map<number, Promise<void>>();
  private unsubscribe: (() => void) | null = null;
  private closed = false;

  constructor(private readonly options: GroupSyncOptions) {}

  start(): void {
    if (this.unsubscribe !== null || this.closed) return;
    this.unsubscribe = this.options.connections.onEvent((deviceId, event) => {
      if (event.type === 'connected') this.inBackground(deviceId, () => this.syncAll(deviceId));
      else if (event.type === 'groups_changed') {
        this.inBackground(deviceId, async () => {
          for (const groupId of new Set(event.groupIds)) await this.syncOne(deviceId, groupId, event.detail);
        });
      }
    });
  }

  /**
   * Reads one group from the network and stores it, in this device's order:
   * a change the gateway itself made is in the store when this resolves, and
   * a snapshot read earlier can never overwrite one read later. Resolves with
   * the stored group, or null when the device is no longer in it.
   */
  refresh(deviceId: number, networkId: NetworkGroupId): Promise<GroupWithDevice | null> {
    return this.schedule(deviceId, () => this.syncOne(deviceId, networkId));
  }

  /** Resolves when every sync scheduled so far has finished (tests, shutdown). */
  async idle(): Promise<void> {
    while (this.chains.size > 0) await Promise.all([...this.chains.values()]);
  }

  async close(): Promise<void> {
    this.closed = true;
    this.unsubscribe?.();
    this.unsubscribe = null;
    await this.idle();
  }

  private inBackground(deviceId: number, work: () => Promise<unknown>): void {
    this.schedule(deviceId, work).catch((error: unknown) => {
      // A dropped connection is normal: the next `connected` syncs everything again.
      if (error instanceof SyncClosedError || error instanceof NetworkUnavailableError) return;
      this.options.logger.warn({ err: error, deviceId }, 'group sync failed');
    });
  }

  /** Runs `work` after every earlier sync of the device; a failure is the caller's and does not stop the next one. */
  private schedule<T>(deviceId: number, work: () => Promise<T>): Promise<T> {
    const previous = this.chains.get(deviceId) ?? Promise.resolve();
    const result = previous.then(() => {
      if (this.closed) throw new SyncClosedError();
      return work();
    });
    const tail: Promise<void> = result.then(
      () => undefined,
      () => undefined,
    );
    this.chains.set(deviceId, tail);
    void tail.then(() => {
      if (this.chains.get(deviceId) === tail) this.chains.delete(deviceId);
    });
    return result;
  }

  /** The device's whole list: every group it is in is stored, every other one it was in is marked left. */
  private async syncAll(deviceId: number): Promise<void> {
    const conn = this.options.connections.connection(deviceId);
    if (conn === null) return;
    const groups = await conn.listGroups();
    const { db } = this.options.store;
    await db.transaction().execute(async (trx) => {
      const device = await devicesRepository.findById(trx, deviceId);
      if (device === undefined || device.deleted_at !== null) return;
      const now = this.options.clock.now();
      for (const group of groups) {
        await groupsRepository.upsert(trx, device.account_id, deviceId, snapshotOf(group, device.phone), now);
      }
      const listed = new Set(groups.map((g) => g.id));
      const gone = (await groupsRepository.currentNetworkIds(trx, deviceId)).filter((id) => !listed.has(id));
      await groupsRepository.markLeft(trx, deviceId, gone, now);
    });
  }

  /**
   * One group: refreshed, or marked left when the network no longer shows it to the device; with the events the
   * change raises (see the module's header), recorded in the same transaction.
   */
  private async syncOne(
    deviceId: number,
    networkId: NetworkGroupId,
    detail?: GroupChangeDetail,
  ): Promise<GroupWithDevice | null> {
    const conn = this.options.connections.connection(deviceId);
    if (conn === null) throw new NetworkUnavailableError();
    const group = await conn.getGroup(networkId).catch((error: unknown) => {
      if (error instanceof NetworkNotFoundError) return null;
      throw error;
    });
    const now = this.options.clock.now();
    return this.options.store.db.transaction().execute(async (trx) => {
      const device = await devicesRepository.findById(trx, deviceId);
      if (device === undefined || device.deleted_at !== null) return null;
      const stored = await groupsRepository.stored(trx, deviceId, networkId);
      const current = stored !== undefined && stored.left_at === null ? stored : undefined;
      const record = async (type: EventType, data: Record<string, unknown>): Promise<void> => {
        await recordEvent(trx, device, type, data, now);
      };
      // Members changed by someone else: the device's own changes are admin.ts's to record.
      const others = detail?.participants !== undefined && detail.by !== device.phone ? detail : undefined;
      if (group === null) {
        await groupsRepository.markLeft(trx, deviceId, [networkId], now);
        if (current !== undefined && others?.participants?.action === 'remove') {
          const { action, phones } = others.participants;
          await record(PARTICIPANT_EVENTS[action], { ...groupRef(current), participants: phones, by: others.by });
        }
        return null;
      }
      const snapshot = snapshotOf(group, device.phone);
      const row = await groupsRepository.upsert(trx, device.account_id, deviceId, snapshot, now);
      const changes = current === undefined ? null : groupChanges(current, snapshot);
      if (changes !== null) {
        await record('group.updated', { ...groupRef(row), changes, ...(detail ? { by: detail.by } : {}) });
      }
      if (current !== undefined && others?.participants !== undefined) {
        const { action, phones } = others.participants;
        await record(PARTICIPANT_EVENTS[action], { ...groupRef(row), participants: phones, by: others.by });
      }
      return { ...row, device_phone: device.phone };
    });
  }
}
