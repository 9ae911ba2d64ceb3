/**
 * Groups and number checks for one device's connection.
 *
 * Owns: listing, reading, creating and changing groups through the open socket; the connection's cache of group
 * metadata (handed to the library for group sends, forgotten on the network's group events); teaching the library
 * the numbers group metadata gives beside LIDs; turning the network's group events into `groups_changed` (a sync's
 * own echo is no change); asking which numbers are on WhatsApp.
 * Must never: report a group change the network did not make (the echo of a listing or of a subject it knew), or keep
 * a group's metadata past the network's word that the group changed.
 */
import { randomUUID } from 'node:crypto';
import type { BaileysEventMap, GroupMetadata } from 'baileys';
import type { CreatedNetworkGroup, GroupChanges, NetworkGroup, NetworkGroupId, PhoneNumber } from '../network.js';
import type { ParticipantAction } from '../group-admin.js';
import type { ConnectionContext } from './connection-context.js';
import * as admin from './group-admin.js';
import { GroupMetadataCache } from './group-cache.js';
import { GroupReceipts, learnMembers } from './group-receipts.js';
import { GROUP_CAPACITY, addOutcome, applyGroupChanges, groupError, toNetworkGroup } from './groups.js';
import { matchNumbers, phoneOf, userJid } from './numbers.js';
import type { SocketPort } from './socket-port.js';

export class ConnectionGroups {
  /** Group subjects last seen, so a sync's own `groups.update` echo does not look like a change. */
  private readonly knownGroups = new Map<string, string>();
  /** Groups' metadata for the library's group sends, forgotten on the network's group events. */
  private readonly cache = new GroupMetadataCache();
  /**
   * Groups whose picture the network said changed while this connection lived, each with an id of its own (the
   * library's notification carries none): what `pictureId` reports, so a sync sees the change. Other groups
   * report no picture (the metadata has none).
   */
  private readonly pictures = new Map<string, string>();
  /** Listings in flight: the library announces every group it fetched as an update, which is no change. */
  private listing = 0;

  constructor(private readonly ctx: ConnectionContext) {}

  /** The library's `cachedGroupMetadata`: a group's metadata from the cache, fetched through `socket` when missing. */
  cached(socket: SocketPort, jid: string): Promise<GroupMetadata | undefined> {
    return this.cache.lookup(jid, (group) => socket.groupMetadata(group));
  }

  /** A group's metadata from the cache (fetched once when missing), its members' numbers taught to the library. */
  async membersOf(socket: SocketPort, group: string): Promise<GroupMetadata> {
    const metadata = await this.cache.lookup(group, (jid) => socket.groupMetadata(jid));
    await learnMembers(socket, [metadata], this.ctx.deps.logger);
    return metadata;
  }

  /** The socket's group receipts, passed on as `message_status` with the member's number (group-receipts.ts). */
  receiptsFor(socket: SocketPort): GroupReceipts {
    return new GroupReceipts(
      async (lid) => socket.signalRepository?.lidMapping.getPNForLID(lid),
      () => socket.user,
      (event) => this.ctx.emit(event),
      (error) => this.ctx.deps.logger.warn({ err: error }, 'group receipts could not be passed on'),
    );
  }

  onUpsert(groups: BaileysEventMap['groups.upsert']): void {
    this.changed(groups.filter((g) => !this.knownGroups.has(g.id)).map((g) => g.id));
  }

  onUpdate(groups: BaileysEventMap['groups.update']): void {
    this.cache.forget(groups.flatMap((g) => (g.id === undefined ? [] : [g.id])));
    if (this.listing > 0) return;
    this.changed(
      groups
        .filter((g) => g.id !== undefined && (g.subject === undefined || this.knownGroups.get(g.id) !== g.subject))
        .map((g) => g.id as string),
    );
  }

  onParticipants(update: BaileysEventMap['group-participants.update']): void {
    this.cache.forget([update.id]);
    this.changed([update.id]);
  }

  private changed(ids: string[]): void {
    if (ids.length > 0) this.ctx.emit({ type: 'groups_changed', groupIds: ids });
  }

  /** The network said a group's picture changed (or was removed): the group changed. */
  onPicture(jid: string): void {
    this.pictures.set(jid, randomUUID());
    this.cache.forget([jid]);
    this.changed([jid]);
  }

  private remember(group: NetworkGroup): NetworkGroup {
    this.knownGroups.set(group.id, group.subject);
    const picture = this.pictures.get(group.id);
    return picture === undefined ? group : { ...group, pictureId: picture };
  }

  async listGroups(): Promise<NetworkGroup[]> {
    const socket = this.ctx.open();
    this.listing += 1;
    try {
      const all = await socket.groupFetchAllParticipating();
      await learnMembers(socket, Object.values(all), this.ctx.deps.logger);
      return Object.values(all).map((metadata) => this.remember(toNetworkGroup(this.cache.store(metadata))));
    } finally {
      this.listing -= 1;
    }
  }

  async getGroup(groupId: NetworkGroupId): Promise<NetworkGroup> {
    try {
      const socket = this.ctx.open();
      const metadata = await socket.groupMetadata(groupId);
      await learnMembers(socket, [metadata], this.ctx.deps.logger);
      return this.remember(toNetworkGroup(this.cache.store(metadata)));
    } catch (error) {
      throw groupError(error);
    }
  }

  async createGroup(subject: string, participants: ReadonlyArray<PhoneNumber>): Promise<CreatedNetworkGroup> {
    try {
      const created = await this.ctx.open().groupCreate(subject, participants.map(userJid));
      // The creation answer may list participants that failed: the group as the network now has it.
      const group = await this.getGroup(created.id);
      const members = new Set(group.participants.map((p) => p.phone));
      // WhatsApp gives no reason per refused participant here; "not found" until verified on real phones.
      const notAdded = participants
        .filter((phone) => !members.has(phone))
        .map((phone) => ({ phone, code: 'USER_NOT_FOUND' as const }));
      return { ...group, notAdded };
    } catch (error) {
      throw groupError(error);
    }
  }

  async addParticipants(groupId: NetworkGroupId, phones: ReadonlyArray<PhoneNumber>) {
    const socket = this.ctx.open();
    try {
      const before = this.cache.store(await socket.groupMetadata(groupId));
      const results = await socket.groupParticipantsUpdate(groupId, phones.map(userJid), 'add');
      const byPhone = new Map(results.map((r) => [phoneOf(r.jid), r.status] as const));
      return phones.map((phone, i) =>
        addOutcome(
          phone,
          byPhone.get(phone) ?? results[i]?.status ?? '500',
          before.participants.length >= GROUP_CAPACITY,
        ),
      );
    } catch (error) {
      throw groupError(error);
    }
  }

  async updateGroup(groupId: NetworkGroupId, changes: GroupChanges) {
    await applyGroupChanges(this.ctx.open(), groupId, changes);
    return this.getGroup(groupId);
  }

  async changeParticipants(groupId: NetworkGroupId, phones: ReadonlyArray<PhoneNumber>, action: ParticipantAction) {
    const socket = this.ctx.open();
    const metadata = await socket.groupMetadata(groupId).catch((error: unknown) => {
      throw groupError(error);
    });
    try {
      return await admin.changeParticipants(socket, metadata, phones, action);
    } finally {
      this.cache.forget([groupId]);
    }
  }

  groupInvite(groupId: NetworkGroupId, revoke: boolean): Promise<string> {
    return admin.groupInvite(this.ctx.open(), groupId, revoke);
  }

  async joinGroup(code: string): Promise<NetworkGroup> {
    return this.remember(await admin.joinGroup(this.ctx.open(), code));
  }

  async leaveGroup(groupId: NetworkGroupId): Promise<void> {
    await admin.leaveGroup(this.ctx.open(), groupId);
    this.cache.forget([groupId]);
    this.knownGroups.delete(groupId);
  }

  async checkNumbers(phones: ReadonlyArray<PhoneNumber>) {
    const answers = (await this.ctx.open().onWhatsApp(...phones)) ?? [];
    return matchNumbers(phones, answers);
  }
}
