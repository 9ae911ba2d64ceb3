/**
 * The chat routes' rules (DECISIONS 16; docs/api.md, Chats): the chat list, a chat's history, marking a chat read
 * and archiving, pinning or muting it on the network.
 *
 * Owns: naming the device (`device`: its number or id; another account's is 404 as everywhere), naming the chat
 * (`{chat}`: a phone number, or a group as the group routes take it: the gateway's numeric id or the JID), the page
 * sizes and cursors, and the order of a settings change: carried out on the network first, stored once it was.
 * Marking read is the message action's (messages/actions.ts: queued to the network, recorded at once), asked for
 * the chat's newest unread message until none is left.
 * Must never: answer a settings change as made that the network refused, hold a transaction while the network
 * works, or scan a device's messages (the chat list is kept by maintain.ts).
 */
import type { Clock } from '../clock.js';
import { devicesRepository, type DeviceRow } from '../devices/repository.js';
import { ApiError } from '../errors.js';
import type { MessageActions } from '../messages/actions.js';
import { incomingIdsRepository } from '../messages/incoming-ids-repository.js';
import type { KnownExtras, MessageReads } from '../messages/reads.js';
import { messagesRepository, type MessageRow } from '../messages/repository.js';
import {
  NetworkNotFoundError,
  NetworkUnavailableError,
  type ChatChange,
  type ChatLastMessage,
  type NetworkConnection,
} from '../network/network.js';
import { GROUP_JID_PATTERN, PHONE_PATTERN } from '../shapes.js';
import { groupsRepository } from '../groups/repository.js';
import type { Store } from '../store/store.js';
import { isGroupChat } from './chat-key.js';
import { decodeCursor, encodeCursor, presentChat, type ChatJson } from './present.js';
import { chatsRepository, emptyChat, type ChatRow, type ChatWithLast } from './repository.js';
import { readSettings } from './settings.js';
import type { MessageJson } from '../messages/present.js';

export const DEVICE_RULE = 'is required: the device’s phone number or id';
export const CHAT_RULE =
  'must be a phone number (digits, country code first, no +) or a group’s id (the gateway’s number for it, or its network id ending in @g.us)';
/** Reads of one chat asked for at most (each marks up to READ_AT_ONCE messages); a chat never needs more. */
const READ_ROUNDS = 100;

export interface ChatsOptions {
  readonly store: Store;
  readonly clock: Clock;
  readonly devices: { findByPhone(accountId: number, phone: string): Promise<DeviceRow | undefined> };
  readonly connections: { connection(deviceId: number): NetworkConnection | null };
  readonly reads: MessageReads;
  readonly actions: MessageActions;
}

export interface Page<T> {
  readonly data: T[];
  readonly next_cursor: string | null;
}

export class ChatsService {
  constructor(private readonly options: ChatsOptions) {}

  /** `GET /chats?device=&limit=&cursor=`: most recent first. */
  async list(accountId: number, query: { device?: unknown; limit: number; cursor?: string }): Promise<Page<ChatJson>> {
    const device = await this.device(accountId, query.device);
    const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor);
    const { db } = this.options.store;
    const rows = await chatsRepository.pageWithLast(
      db,
      device.id,
      after === undefined ? undefined : { at: after.at, chat: after.key },
      query.limit + 1,
    );
    const page = rows.slice(0, query.limit);
    const last = page.at(-1)?.chat;
    return {
      data: await this.presentWithLast(accountId, device.id, page),
      next_cursor:
        rows.length > query.limit && last !== undefined ? encodeCursor(Number(last.last_message_at), last.chat) : null,
    };
  }

  /** `GET /chats/{chat}/messages?device=&limit=&cursor=`: both directions, newest first. */
  async messages(
    accountId: number,
    ref: string,
    query: { device?: unknown; limit: number; cursor?: string },
  ): Promise<Page<MessageJson>> {
    const device = await this.device(accountId, query.device);
    const chat = await this.chat(accountId, device, ref);
    const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor);
    const rows = await chatsRepository.messages(
      this.options.store.db,
      device.id,
      chat,
      after === undefined ? undefined : { at: after.at, id: after.key },
      query.limit + 1,
    );
    const page = rows.slice(0, query.limit);
    const last = page.at(-1);
    return {
      data: await this.options.reads.present(accountId, page),
      next_cursor:
        rows.length > query.limit && last !== undefined ? encodeCursor(Number(last.created_at), last.id) : null,
    };
  }

  /** `POST /chats/{chat}/read {device}`: every unread received message of the chat, marked read on the network. */
  async read(accountId: number, ref: string, body: unknown): Promise<ChatJson> {
    const device = await this.device(accountId, fieldOf(body, 'device'));
    const chat = await this.chat(accountId, device, ref);
    this.connection(device);
    const { db } = this.options.store;
    for (let round = 0; round < READ_ROUNDS; round++) {
      const newest = await chatsRepository.newestUnread(db, device.id, chat);
      if (newest === undefined) break;
      const before = (await chatsRepository.find(db, device.id, chat))?.unread_count;
      await this.options.actions.read(accountId, newest.id, undefined);
      // A read that marked nothing more (another request got there first) ends here: nothing is left to it.
      if ((await chatsRepository.find(db, device.id, chat))?.unread_count === before) break;
    }
    return this.one(accountId, device.id, chat);
  }

  /** `PATCH /chats/{chat} {device, archived?, pinned?, muted_until?}`: carried out on the network, then stored. */
  async modify(accountId: number, ref: string, body: unknown): Promise<ChatJson> {
    const settings = readSettings(body, this.options.clock.now());
    const device = await this.device(accountId, fieldOf(body, 'device'));
    const chat = await this.chat(accountId, device, ref);
    const conn = this.connection(device);
    const { db } = this.options.store;
    const change: ChatChange = {
      ...(settings.archived === undefined ? {} : { archived: settings.archived }),
      ...(settings.pinned === undefined ? {} : { pinned: settings.pinned }),
      ...(settings.mutedUntil === undefined
        ? {}
        : { mutedUntil: settings.mutedUntil === null ? null : new Date(settings.mutedUntil) }),
    };
    const last = await this.lastMessage(device.id, chat);
    await conn.modifyChat(chat, change, last).catch((error: unknown) => {
      if (error instanceof NetworkUnavailableError) throw new ApiError('DEVICE_NOT_CONNECTED');
      if (error instanceof NetworkNotFoundError) {
        throw new ApiError(isGroupChat(chat) ? 'GROUP_NOT_FOUND' : 'NOT_FOUND', {
          error: 'the network has no such chat',
        });
      }
      throw error;
    });
    await chatsRepository.saveSettings(db, accountId, device.id, chat, settings, this.options.clock.now());
    return this.one(accountId, device.id, chat);
  }

  /** The chat as the list shows it; one the gateway has no row for is shown empty. */
  private async one(accountId: number, deviceId: number, chat: string): Promise<ChatJson> {
    const row =
      (await chatsRepository.find(this.options.store.db, deviceId, chat)) ?? emptyChat(accountId, deviceId, chat);
    const [shown] = await this.present(accountId, deviceId, [row]);
    return shown!;
  }

  private async present(accountId: number, deviceId: number, rows: readonly ChatRow[]): Promise<ChatJson[]> {
    const { db } = this.options.store;
    const ids = rows.flatMap((row) => (row.last_message_id === null ? [] : [row.last_message_id]));
    const found = await messagesRepository.findByIds(db, ids);
    const messages = [...found.values()].filter((m) => m.account_id === accountId);
    return this.presentAll(accountId, deviceId, rows, messages);
  }

  /** A page read with its last messages (chatsRepository.pageWithLast): only the extras it found are read. */
  private presentWithLast(accountId: number, deviceId: number, page: readonly ChatWithLast[]): Promise<ChatJson[]> {
    const messages = page.flatMap(({ last }) => (last !== null && last.account_id === accountId ? [last] : []));
    const known = {
      reactions: new Set(page.flatMap((row) => (row.hasReactions && row.last !== null ? [row.last.id] : []))),
      media: new Set(page.flatMap((row) => (row.hasMedia && row.last !== null ? [row.last.id] : []))),
    };
    return this.presentAll(
      accountId,
      deviceId,
      page.map((row) => row.chat),
      messages,
      known,
    );
  }

  private async presentAll(
    accountId: number,
    deviceId: number,
    rows: readonly ChatRow[],
    messages: readonly MessageRow[],
    known?: KnownExtras,
  ): Promise<ChatJson[]> {
    const { db } = this.options.store;
    const shown = new Map((await this.options.reads.present(accountId, messages, known)).map((m) => [m.id, m]));
    const names = await chatsRepository.groupNames(
      db,
      deviceId,
      rows.map((row) => row.chat),
    );
    return rows.map((row) =>
      presentChat(
        row,
        names.get(row.chat) ?? row.name,
        row.last_message_id === null ? null : (shown.get(row.last_message_id) ?? null),
      ),
    );
  }

  /** The message an archive is placed at: the chat's last, as the network knows it (a received one by its id there). */
  private async lastMessage(deviceId: number, chat: string): Promise<ChatLastMessage | null> {
    const { db } = this.options.store;
    const id = (await chatsRepository.find(db, deviceId, chat))?.last_message_id;
    if (id === null || id === undefined) return null;
    const row = (await messagesRepository.findByIds(db, [id])).get(id);
    if (row === undefined) return null;
    const at = new Date(Number(row.sent_at ?? row.created_at));
    if (row.direction === 'outgoing') return { id: row.id, fromMe: true, at };
    const networkId = await incomingIdsRepository.incomingNetworkId(db, deviceId, row.id);
    if (networkId === undefined) return null;
    const author = isGroupChat(chat) && row.sender !== null ? { author: row.sender } : {};
    return { id: networkId, fromMe: false, at, ...author };
  }

  /** The account's device a request names by number or id (400 when it names none, 404 when not the account's). */
  private async device(accountId: number, ref: unknown): Promise<DeviceRow> {
    const text = typeof ref === 'number' ? String(ref) : ref;
    if (typeof text !== 'string' || text === '')
      throw new ApiError('VALIDATION_FAILED', { errors: { device: [DEVICE_RULE] } });
    if (PHONE_PATTERN.test(text)) {
      const byPhone = await this.options.devices.findByPhone(accountId, text);
      if (byPhone !== undefined) return byPhone;
    }
    const id = /^[1-9][0-9]{0,15}$/.test(text) ? Number(text) : NaN;
    if (Number.isSafeInteger(id)) {
      const byId = await devicesRepository.findById(this.options.store.db, id);
      if (byId !== undefined && byId.account_id === accountId && byId.deleted_at === null) return byId;
    }
    throw new ApiError('DEVICE_NOT_FOUND');
  }

  /**
   * The chat `{chat}` names: a group JID as it is; a number that is the gateway's id of one of the device's groups,
   * that group; any other phone number, the chat with that person. A short number that is no group: 404.
   */
  private async chat(accountId: number, device: DeviceRow, ref: string): Promise<string> {
    if (GROUP_JID_PATTERN.test(ref)) return ref;
    if (!/^[1-9][0-9]{0,15}$/.test(ref)) throw new ApiError('VALIDATION_FAILED', { errors: { chat: [CHAT_RULE] } });
    const group = await groupsRepository.find(this.options.store.db, accountId, Number(ref));
    if (group !== undefined && group.device_id === device.id) return group.network_id;
    if (PHONE_PATTERN.test(ref)) return ref;
    throw new ApiError('GROUP_NOT_FOUND');
  }

  private connection(device: DeviceRow): NetworkConnection {
    if (device.status === 'SUSPENDED') throw new ApiError('DEVICE_SUSPENDED');
    const conn = this.options.connections.connection(device.id);
    if (conn === null) throw new ApiError('DEVICE_NOT_CONNECTED');
    return conn;
  }
}

function fieldOf(body: unknown, name: string): unknown {
  return typeof body === 'object' && body !== null ? (body as Record<string, unknown>)[name] : undefined;
}
