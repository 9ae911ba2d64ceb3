/**
 * Group members' receipts → the seam's `message_status` with a `participant` (issue 24, item 2; docs/whatsapp.md,
 * Group receipts).
 *
 * WhatsApp reports receipts of a group message per member, and Baileys hands them over as
 * `message-receipt.update` (not `messages.update`, which carries direct chats' receipts): one entry per message id
 * and member, with the member's JID and the receipt's time in seconds under `receiptTimestamp` (delivered),
 * `readTimestamp` (read) or `playedTimestamp` (played, a read for the gateway).
 *
 * Owns: teaching the library members' numbers from group metadata, which of those entries are the gateway's (its own messages, ids it sent), the member's phone number (a LID
 * through the library's LID mapping when it knows it; the member's JID as it came otherwise), a read passed on as
 * the delivery and the read (the delivery may never come on its own), and the order: the receipts of one
 * connection are passed on in the order the library handed them over, although resolving a LID takes a moment.
 * Must never: report a LID as a phone number, drop a receipt because its member's number is unknown, or hold
 * receipts beyond the connection (the gateway's store has them).
 */
import {
  areJidsSameUser,
  isLidUser,
  isPnUser,
  jidNormalizedUser,
  type BaileysEventMap,
  type GroupMetadata,
} from 'baileys';
import type { Logger } from 'pino';
import type { SocketPort } from './socket-port.js';
import type { NetworkEvent } from '../network.js';
import { fromNetworkId } from './ids.js';
import { phoneOf } from './numbers.js';

type LidStore = SocketPort['signalRepository']['lidMapping'];

type Receipt = Extract<NetworkEvent, { type: 'message_status'; status: 'sent' | 'delivered' | 'read' }>;

/**
 * Teaches the library's LID mapping the numbers of members that group metadata names by LID (`phoneNumber` beside a
 * LID `id`, or `lid` beside a number): the library does not learn them from metadata itself, and receipts in
 * LID-addressed groups name members by LID only.
 */
export async function learnMembers(
  socket: { readonly signalRepository: { readonly lidMapping: Pick<LidStore, 'storeLIDPNMappings'> } },
  groups: ReadonlyArray<Pick<GroupMetadata, 'participants'>>,
  logger: Pick<Logger, 'warn'>,
): Promise<void> {
  const lidMapping = socket.signalRepository?.lidMapping;
  if (lidMapping === undefined) return;
  const pairs: Array<{ lid: string; pn: string }> = [];
  for (const { participants } of groups) {
    for (const p of participants) {
      if (isLidUser(p.id) && typeof p.phoneNumber === 'string' && isPnUser(p.phoneNumber)) {
        pairs.push({ lid: p.id, pn: p.phoneNumber });
      } else if (isPnUser(p.id) && typeof p.lid === 'string' && isLidUser(p.lid)) {
        pairs.push({ lid: p.lid, pn: p.id });
      }
    }
  }
  // Never fails the group look-up it rides on: a member left unnamed is listed by its LID.
  await lidMapping
    .storeLIDPNMappings(pairs)
    .catch((error: unknown) => logger.warn({ err: error }, "members' numbers from group metadata were not noted"));
}

/** The phone-number JID behind a LID, or null when the library does not know it (Baileys' LID mapping store). */
export type LidResolver = (lid: string) => Promise<string | null | undefined>;

/** The device's own account: its number's JID and its LID. */
export interface Me {
  readonly id?: string | null;
  readonly lid?: string | null;
}

type Seconds = number | { toString(): string } | null | undefined;

function when(seconds: Seconds): Date {
  const value =
    typeof seconds === 'number'
      ? seconds
      : seconds === null || seconds === undefined
        ? NaN
        : Number(seconds.toString());
  return Number.isFinite(value) && value > 0 ? new Date(value * 1000) : new Date();
}

/** The member's number, or its JID (normalised, device dropped) when no number is known for it. */
export async function memberOf(jid: string, resolve: LidResolver): Promise<string> {
  const user = jidNormalizedUser(jid);
  if (isLidUser(user)) {
    const pn = await resolve(user).catch(() => null);
    return phoneOf(pn) ?? user;
  }
  return phoneOf(user) ?? user;
}

/** The seam's receipts for one batch of `message-receipt.update`, in the order given. */
export async function groupReceipts(
  updates: BaileysEventMap['message-receipt.update'],
  resolve: LidResolver,
  me?: Me,
): Promise<Receipt[]> {
  const out: Receipt[] = [];
  for (const { key, receipt } of updates) {
    if (key.fromMe !== true) continue;
    const id = fromNetworkId(key.id);
    const jid = receipt.userJid;
    if (id === null || typeof jid !== 'string' || jid === '') continue;
    // The device's own account (its phone, its other linked devices) is not a member the message reached.
    if (me !== undefined && [me.id, me.lid].some((own) => typeof own === 'string' && areJidsSameUser(own, jid))) {
      continue;
    }
    const read = receipt.readTimestamp ?? receipt.playedTimestamp;
    const delivered = receipt.receiptTimestamp;
    if ((read === null || read === undefined) && (delivered === null || delivered === undefined)) continue;
    const participant = await memberOf(jid, resolve);
    // The library's event buffer merges a member's receipts of one message: a delivery and a read may come as one.
    out.push({ type: 'message_status', id, status: 'delivered', at: when(delivered ?? read), participant });
    if (read !== null && read !== undefined) {
      out.push({ type: 'message_status', id, status: 'read', at: when(read), participant });
    }
  }
  return out;
}

/** One connection's group receipts, passed on in the order they came, each batch once its members are resolved. */
export class GroupReceipts {
  private chain: Promise<void> = Promise.resolve();

  constructor(
    private readonly resolve: LidResolver,
    /** The device's own account, as the library knows it once logged in. */
    private readonly me: () => Me | undefined,
    private readonly emit: (event: NetworkEvent) => void,
    private readonly onError: (error: unknown) => void,
  ) {}

  handle(updates: BaileysEventMap['message-receipt.update']): void {
    this.chain = this.chain
      .then(() => groupReceipts(updates, this.resolve, this.me()))
      .then((events) => events.forEach((event) => this.emit(event)))
      .catch(this.onError);
  }
}
