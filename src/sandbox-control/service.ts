/**
 * The sandbox control API's rules of ownership (issue 10, item 6): a tester
 * acts only on their own account's devices and on what those sent and
 * received, even though the simulated network is one world shared by every
 * account of the gateway.
 *
 * Owns: what each control operation may touch. A phone's inbox shows only
 * messages the caller's devices sent; a phone writes only to a caller's device
 * (another account's: 404 `Device not found`, as a missing one); read receipts
 * only on the caller's messages (404 `Message not found` otherwise); a QR
 * scanned only for a caller's device; phones that are another account's
 * device numbers are not the caller's to change or to put in a group. Every
 * phone setting is the caller's own view of the phone (issue 22, item 4): it
 * changes only what the caller's devices meet and what the caller is shown.
 * Must never: know about HTTP or write SQL; pass another account's data or
 * device to the sandbox.
 */
import { ApiError } from '../errors.js';
import type {
  SandboxCall,
  SandboxChatSettings,
  SandboxControl,
  SandboxPhone,
  SandboxPhoneSettings,
} from '../network/sandbox-control.js';
import { readSettings } from '../chats/settings.js';
import type { NetworkGroup } from '../network/network.js';
import type { Store } from '../store/store.js';
import { incomingIdsRepository } from '../messages/incoming-ids-repository.js';
import { FAILED_QUOTE } from '../messages/quotes.js';
import { messagesRepository } from '../messages/repository.js';
import { phoneMessageContent, type PhoneMessageBody } from './phone-message.js';
import { sandboxControlRepository as repo } from './repository.js';

/** The account's own view of the sandbox's phones: the same name its devices connect with (devices/connections.ts). */
function viewOf(accountId: number): string {
  return String(accountId);
}

const FOREIGN_NUMBER = 'this number belongs to a device of another account';
const UNKNOWN_REPLY = 'is not a message the receiving device sent or received';
const NOT_ON_SANDBOX = 'this account is not a sandbox account: its devices are on the real network';

export class SandboxControlService {
  constructor(
    private readonly store: Store,
    private readonly sandbox: SandboxControl,
    /** Whether the account's devices are on the sandbox (AccountsService.isSandbox). */
    private readonly isSandboxAccount: (accountId: number) => Promise<boolean>,
    /**
     * Waits until the pairing a scan set off is recorded by the gateway, so that the scan answers only when the
     * device is sendable by its number (a send right after the answer used to get 404 on PostgreSQL).
     */
    private readonly recorded: (deviceIds: readonly number[]) => Promise<void> = async () => undefined,
  ) {}

  /** Refuses a device the caller owns but that is not on the sandbox, exactly as a missing device. */
  async requireOnSandbox(accountId: number): Promise<void> {
    if (!(await this.isSandboxAccount(accountId))) throw new ApiError('DEVICE_NOT_FOUND', { error: NOT_ON_SANDBOX });
  }

  async scan(accountId: number, qr: string, phone: string): Promise<{ device_phone: string }> {
    const deviceIds = (await this.devicesOf(accountId)).map((device) => device.id);
    const answer = await this.sandbox.scan(qr, phone, { deviceIds });
    await this.recorded(deviceIds);
    return answer;
  }

  /** A pairing code typed on a phone: only codes of the caller's own devices (another's is unknown). */
  async pair(accountId: number, code: string, phone: string): Promise<{ device_phone: string }> {
    const deviceIds = (await this.devicesOf(accountId)).map((device) => device.id);
    const answer = await this.sandbox.pair(code, phone, { deviceIds });
    await this.recorded(deviceIds);
    return answer;
  }

  async upsertPhone(accountId: number, settings: SandboxPhoneSettings): Promise<SandboxPhone> {
    await this.refuseForeignNumbers(accountId, [settings.phone], () => ({ error: FOREIGN_NUMBER }));
    return this.ownView(accountId, await this.sandbox.upsertPhone(settings, viewOf(accountId)));
  }

  async getPhone(accountId: number, phone: string): Promise<SandboxPhone> {
    return this.ownView(accountId, await this.sandbox.getPhone(phone, viewOf(accountId)));
  }

  /** The phone sends a message of any incoming kind to one of the caller's devices (phone-message.ts). */
  async sendFromPhone(accountId: number, phone: string, body: PhoneMessageBody): Promise<{ message_id: string }> {
    const content = phoneMessageContent(body);
    await this.requireOnSandbox(accountId);
    const { to } = body;
    const device = await this.pairedDevice(accountId, to);
    const replyTo = body.reply_to === undefined ? undefined : await this.replyTo(accountId, device.id, body.reply_to);
    const message = {
      content,
      ...(replyTo === undefined ? {} : { replyTo }),
      ...(body.media === undefined ? {} : { mediaUrl: body.media.url }),
    };
    return this.sandbox.sendFromPhone(phone, to, message, { session: device.session }, viewOf(accountId));
  }

  /** The phone calls one of the caller's devices (`group_id`: a group call in that group). */
  async callFromPhone(
    accountId: number,
    phone: string,
    body: { to: string; video?: boolean; group_id?: string },
  ): Promise<SandboxCall> {
    await this.requireOnSandbox(accountId);
    const device = await this.pairedDevice(accountId, body.to);
    const call = {
      ...(body.video === undefined ? {} : { video: body.video }),
      ...(body.group_id === undefined ? {} : { group: body.group_id }),
    };
    return this.sandbox.callFromPhone(phone, call, { session: device.session }, viewOf(accountId));
  }

  /**
   * The device's own phone (`phone`: the number one of the caller's devices is paired to) archives, pins or mutes a
   * chat, as a person does on the phone: the device hears it (`chat_changed`) and `GET /chats` shows it. The fields
   * follow `PATCH /chats/{chat}`'s rules (chats/settings.ts), with their 400s.
   */
  async changeChatOnPhone(accountId: number, phone: string, chat: string, body: unknown): Promise<SandboxChatSettings> {
    await this.requireOnSandbox(accountId);
    const settings = readSettings(body, Date.now());
    const device = await this.pairedDevice(accountId, phone);
    const change = {
      ...(settings.archived === undefined ? {} : { archived: settings.archived }),
      ...(settings.pinned === undefined ? {} : { pinned: settings.pinned }),
      ...(settings.mutedUntil === undefined
        ? {}
        : { muted_until: settings.mutedUntil === null ? null : new Date(settings.mutedUntil).toISOString() }),
    };
    return this.sandbox.changeChatOnPhone(phone, chat, change, { session: device.session }, viewOf(accountId));
  }

  /**
   * The phone's earlier conversation with the number `to`, offered as history when `to` next pairs one of the
   * caller's devices (docs/api.md, History sync). Seeded in the caller's view only: no other account's device sees it.
   */
  async seedHistory(
    accountId: number,
    phone: string,
    body: { to: string; messages: ReadonlyArray<{ text: string; from_me?: boolean; at?: string }> },
  ): Promise<{ seeded: number }> {
    await this.requireOnSandbox(accountId);
    return this.sandbox.seedHistory(phone, body.to, body.messages, viewOf(accountId));
  }

  /** The account's device paired with `to` (404 `Device not found` otherwise), and its network session. */
  private async pairedDevice(accountId: number, to: string): Promise<{ id: number; session: string }> {
    const devices = await repo.devicesOf(this.store.db, accountId);
    // The paired number wins over the one given at creation, as everywhere a device is found by number.
    const device =
      devices.find((d) => d.phone === to) ?? devices.find((d) => d.phone === null && d.expected_phone === to);
    if (device === undefined || device.network_session === null) {
      throw new ApiError('DEVICE_NOT_FOUND', { error: `no device of this account is paired with ${to}` });
    }
    return { id: device.id, session: device.network_session };
  }

  /** The message `reply_to` names, as the device knows it: ours by our id, a received one by the network's id. */
  private async replyTo(accountId: number, deviceId: number, id: string): Promise<{ id: string; fromMe: boolean }> {
    const refused = (why: string) => new ApiError('VALIDATION_FAILED', { errors: { reply_to: [why] } });
    const row = await messagesRepository.find(this.store.db, accountId, id);
    if (row === undefined || row.device_id !== deviceId) throw refused(UNKNOWN_REPLY);
    if (row.direction === 'outgoing') {
      if (row.status === 'failed') throw refused(FAILED_QUOTE);
      return { id: row.id, fromMe: true };
    }
    const networkId = await incomingIdsRepository.incomingNetworkId(this.store.db, deviceId, row.id);
    if (networkId === undefined) throw refused(UNKNOWN_REPLY);
    return { id: networkId, fromMe: false };
  }

  async readMessage(accountId: number, phone: string, messageId: string): Promise<void> {
    if (!(await this.isSandboxAccount(accountId))) throw new ApiError('MESSAGE_NOT_FOUND', { error: NOT_ON_SANDBOX });
    const own = await repo.ownOutgoingIds(this.store.db, accountId, [messageId]);
    if (!own.has(messageId)) throw new ApiError('MESSAGE_NOT_FOUND');
    await this.sandbox.readMessage(phone, messageId, viewOf(accountId));
  }

  async createGroup(
    accountId: number,
    name: string,
    members: ReadonlyArray<{ phone: string; admin?: boolean }>,
  ): Promise<NetworkGroup> {
    const phones = members.map((member) => member.phone);
    await this.refuseForeignNumbers(accountId, phones, (foreign) => ({
      errors: Object.fromEntries(
        phones.flatMap((phone, i) => (foreign.has(phone) ? [[`members.${i}.phone`, [FOREIGN_NUMBER]]] : [])),
      ),
    }));
    return this.sandbox.createGroup(name, members, viewOf(accountId));
  }

  /** A member phone (not one of another account's devices) changes a group's info, or its members. */
  async changeGroup(
    accountId: number,
    phone: string,
    body: {
      group_id: string;
      subject?: string;
      description?: string;
      picture_url?: string;
      action?: 'remove' | 'promote' | 'demote';
      participants?: string[];
    },
  ): Promise<NetworkGroup> {
    await this.requireOnSandbox(accountId);
    await this.refuseForeignNumbers(accountId, [phone], () => ({ error: FOREIGN_NUMBER }));
    const { group_id: groupId, action, participants, ...info } = body;
    const change =
      action !== undefined || participants !== undefined
        ? { action: action ?? ('remove' as const), participants: participants ?? [] }
        : info;
    return this.sandbox.changeGroupFromPhone(phone, groupId, change, viewOf(accountId));
  }

  /** The caller's devices that are on the sandbox: none, for an account whose devices are on the real network. */
  private async devicesOf(accountId: number) {
    return (await this.isSandboxAccount(accountId)) ? repo.devicesOf(this.store.db, accountId) : [];
  }

  private async refuseForeignNumbers(
    accountId: number,
    phones: readonly string[],
    detail: (foreign: Set<string>) => { error?: string; errors?: Record<string, string[]> },
  ): Promise<void> {
    const foreign = await repo.numbersOfOtherAccounts(this.store.db, accountId, [...new Set(phones)]);
    if (foreign.size > 0) throw new ApiError('ACCESS_DENIED', detail(foreign));
  }

  /** The phone with only the inbox entries the caller's devices sent. */
  private async ownView(accountId: number, shown: SandboxPhone): Promise<SandboxPhone> {
    // Only the caller's own devices show among those that blocked the phone.
    const mine = new Set((await repo.devicesOf(this.store.db, accountId)).map((d) => d.phone));
    const phone = { ...shown, blocked_by: shown.blocked_by.filter((device) => mine.has(device)) };
    if (phone.inbox.length === 0) return phone;
    const own = await repo.ownOutgoingIds(this.store.db, accountId, [
      ...new Set(phone.inbox.map((entry) => entry.message_id)),
    ]);
    return { ...phone, inbox: phone.inbox.filter((entry) => own.has(entry.message_id)) };
  }
}
