/**
 * Reading messages back (spec 4.5: `GET /messages/{id}`, `GET /messages`): one message, and a page of the
 * account's messages with its cursor; outgoing group messages carry their members' receipts.
 *
 * Owns: the read paths' rules (a device filter naming no device of the account is an empty page, the
 * cursor's encoding, a row read again when a receipt came after it); every message with the reactions phones show on it.
 * Must never: write, or show a message of another account (every read names the account).
 */
import { ApiError } from '../errors.js';
import type { Db } from '../store/schema.js';
import type { Store } from '../store/store.js';
import { hasMemberReceipts, presentMessage, type MessageJson, type ShownMedia } from './present.js';
import { pollVotesRepository } from './poll-votes.js';
import { reactionsRepository } from './reactions.js';
import { receiptsRepository } from './receipts.js';
import { messagesRepository, type MessageRow } from './repository.js';

/** The account's device with this number (not deleted), if any: the one thing reads need of devices. */
export interface DeviceByPhone {
  findByPhone(accountId: number, phone: string): Promise<{ readonly id: number } | undefined>;
}

/** The media of incoming messages, as shown (src/media/ fills it). */
export interface MediaOfMessages {
  /** The media of these incoming messages as shown, read through `db` (the store, or a transaction on it). */
  shown(messageIds: readonly string[], db?: Db): Promise<Map<string, ShownMedia>>;
  /** The gateway's own URL of a media, served with the account's token (a forward of received media names it). */
  plainUrl(mediaId: string): string;
}

/** Which of the rows given have reactions and incoming media (read with them), when the caller knows. */
export interface KnownExtras {
  readonly reactions: ReadonlySet<string>;
  readonly media: ReadonlySet<string>;
}

export interface MessageFilter {
  device?: string;
  status?: string;
  direction?: string;
  read?: boolean;
  limit: number;
  cursor?: string;
}

export class MessageReads {
  constructor(
    private readonly store: Store,
    private readonly devices: DeviceByPhone,
    private readonly media?: MediaOfMessages,
  ) {}

  async get(accountId: number, id: string): Promise<MessageJson> {
    const row = await messagesRepository.find(this.store.db, accountId, id);
    if (row === undefined) throw new ApiError('MESSAGE_NOT_FOUND');
    const [shown] = await this.withReceipts(accountId, [row]);
    return shown!;
  }

  /**
   * The message objects of `rows` exactly as `GET /messages` shows them (the chat routes show messages so). `known`,
   * when the caller read it with the rows, names the only rows with reactions and incoming media: the others' are
   * not looked for.
   */
  present(accountId: number, rows: readonly MessageRow[], known?: KnownExtras): Promise<MessageJson[]> {
    return this.withReceipts(accountId, rows, known);
  }

  /**
   * The message objects of `rows`, outgoing group messages with their members' receipts. A receipt is committed
   * together with the status change it makes, so a row read before a receipt that came meanwhile is read again:
   * the object never shows a member's receipt without the status it brought.
   */
  private async withReceipts(
    accountId: number,
    rows: readonly MessageRow[],
    known?: KnownExtras,
  ): Promise<MessageJson[]> {
    const db = this.store.db;
    const receipts = await receiptsRepository.forMessages(
      db,
      rows.filter(hasMemberReceipts).map((row) => row.id),
    );
    const reactions = await reactionsRepository.forMessages(
      db,
      rows.filter((row) => known?.reactions.has(row.id) ?? true).map((row) => row.id),
    );
    const votes = await pollVotesRepository.forMessages(
      db,
      rows.filter((row) => row.type === 'poll').map((row) => row.id),
    );
    const incoming = rows
      .filter((row) => row.direction === 'incoming' && (known?.media.has(row.id) ?? true))
      .map((row) => row.id);
    const media = this.media === undefined || incoming.length === 0 ? undefined : await this.media.shown(incoming);
    return Promise.all(
      rows.map(async (row) => {
        const own = receipts.get(row.id) ?? [];
        const behind =
          (row.delivered_at === null && own.some((r) => r.delivered_at !== null)) ||
          (row.read_at === null && own.some((r) => r.read_at !== null));
        const current = behind ? ((await messagesRepository.find(db, accountId, row.id)) ?? row) : row;
        return presentMessage(current, undefined, own, reactions.get(row.id), votes.get(row.id), media?.get(row.id));
      }),
    );
  }

  async list(accountId: number, filter: MessageFilter): Promise<{ data: MessageJson[]; next_cursor: string | null }> {
    let deviceId: number | undefined;
    if (filter.device !== undefined) {
      const device = await this.devices.findByPhone(accountId, filter.device);
      if (device === undefined) return { data: [], next_cursor: null };
      deviceId = device.id;
    }
    const beforeSeq = filter.cursor === undefined ? undefined : decodeCursor(filter.cursor);
    const rows = await messagesRepository.list(this.store.db, accountId, {
      deviceId,
      status: filter.status,
      direction: filter.direction,
      read: filter.read,
      beforeSeq,
      limit: filter.limit + 1,
    });
    const page = rows.slice(0, filter.limit);
    const last = page.at(-1);
    return {
      data: await this.withReceipts(accountId, page),
      next_cursor: rows.length > filter.limit && last !== undefined ? encodeCursor(last.seq) : null,
    };
  }
}

function encodeCursor(seq: number): string {
  return Buffer.from(String(seq)).toString('base64url');
}

function decodeCursor(cursor: string): number {
  const seq = Number(Buffer.from(cursor, 'base64url').toString());
  if (!Number.isSafeInteger(seq) || seq < 1)
    throw new ApiError('VALIDATION_FAILED', { errors: { cursor: ['is not a cursor from this API'] } });
  return seq;
}
