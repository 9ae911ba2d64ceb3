/**
 * Reactions accepted in batches with multi-row statements (docs/internals.md, Message actions; issue 26), on both
 * stores: every `POST /messages/{id}/reaction` that arrives while a commit is in flight joins the next shared commit
 * (store/batcher.ts), as sends do (acceptance.ts), and the batch costs a few statements, not a few per reaction: one
 * read of the targets (nothing is read between a request and its batch), their devices (those not known from the
 * last second), one read of their incoming network ids, one of their reactions, one upsert and one delete of the
 * reactions' end state (prepared, the pairs in one parameter), one multi-row insert of the queue rows, and the reads
 * the answers show.
 *
 * Owns: finding each reaction's message in the request's account and checking its device (the rule is actions.ts's,
 * as for every action), deciding each reaction of a batch in arrival order on the state the earlier ones left (the
 * same phone's two reactions to one message in one batch: the second sees the first), the Idempotency-Key claims of reactions (a
 * refused reaction gives its key back, a later request of the batch with a key claimed earlier in it waits for that
 * one's outcome), the queue rows of the reactions that changed something, and their answers (the message with its
 * reactions as they were right after that reaction).
 * Must never: answer before the batch commits, write anything for a refused reaction, queue a reaction that changes
 * nothing, or write one (message, phone) pair twice in one statement.
 */
import type { Transaction } from 'kysely';
import type { Clock } from '../clock.js';
import type { DeviceRow } from '../devices/repository.js';
import { ApiError } from '../errors.js';
import type { QuotedMessage } from '../network/network.js';
import type { Committer } from '../store/batcher.js';
import type { Database, Db } from '../store/schema.js';
import { IDEMPOTENCY_WINDOW_MS, type SendAnswer } from './acceptance.js';
import { actionTarget } from './actions-rules.js';
import { claimBatchKeys } from './batch-keys.js';
import { idempotencyRepository } from './idempotency-repository.js';
import { incomingIdsRepository, networkIdKey } from './incoming-ids-repository.js';
import { pollVotesRepository } from './poll-votes.js';
import { hasMemberReceipts, presentMessage } from './present.js';
import { pendingQueueRow } from './queue-row.js';
import { reactionsRepository, type ReactionRow, type StoredReaction } from './reactions.js';
import type { MediaOfMessages } from './reads.js';
import { receiptsRepository } from './receipts.js';
import { messagesRepository, type MessageRow, type NewMessageRow } from './repository.js';

export const FAILED_TARGET = 'is a message that failed to send: it cannot be reacted to';

export interface ReactionRequest {
  readonly accountId: number;
  /** The message reacted to (the gateway's id); found in the batch, in the request's account, or a 404. */
  readonly messageId: string;
  readonly emoji: string;
  readonly key: string | undefined;
  readonly requestHash: string;
}

/** The devices of a batch's messages (actions.ts: as every action finds and checks them). */
export interface ReactionDevices {
  /** The account's device holding this number now (undefined: none), read through `db` when not known already. */
  find(db: Db, accountId: number, phone: string): Promise<DeviceRow | undefined>;
  /** Whether the message's device may react now: the device with its number, or the refusal. */
  check(row: MessageRow, device: DeviceRow | undefined): (DeviceRow & { readonly phone: string }) | ApiError;
}

export type ReactionOutcome =
  | { readonly kind: 'ok'; readonly answer: SendAnswer; readonly queued: boolean; readonly deviceId: number }
  | { readonly kind: 'refused'; readonly error: ApiError }
  | { readonly kind: 'replay'; readonly requestHash: string; readonly response: string };

type Announce = (trx: Transaction<Database>, deviceIds: readonly number[]) => Promise<void>;

/** A reaction decided in the batch: the message it names, and that message's reactions right after it. */
interface Decided {
  readonly index: number;
  readonly row: MessageRow;
  readonly reactions: ReactionRow[];
  readonly queued: boolean;
}

export class ReactionWriter {
  private readonly submit: (request: ReactionRequest) => Promise<ReactionOutcome>;

  constructor(
    committer: Committer,
    private readonly clock: Clock,
    private readonly devices: ReactionDevices,
    private readonly announce: Announce | undefined,
    private readonly incomingMedia: MediaOfMessages | undefined,
  ) {
    this.submit = committer.channel((trx, items: ReactionRequest[]) => this.write(trx, items));
  }

  accept(request: ReactionRequest): Promise<ReactionOutcome> {
    return this.submit(request);
  }

  private async write(trx: Transaction<Database>, items: ReactionRequest[]): Promise<ReactionOutcome[]> {
    const now = this.clock.now();
    const outcomes: Array<ReactionOutcome | undefined> = new Array(items.length);
    const { replays, followers } = await claimBatchKeys(trx, items, now, IDEMPOTENCY_WINDOW_MS);
    for (const [i, replay] of replays) outcomes[i] = { kind: 'replay', ...replay };
    const live = [...items.keys()].filter((i) => outcomes[i] === undefined && !followers.has(i));

    // The targets as they are now, their devices, network ids and reactions: one statement each for the whole batch.
    const ids = [...new Set(live.map((i) => items[i]!.messageId))];
    const current = await messagesRepository.findByIds(trx, ids);
    const rowOf = (item: ReactionRequest) => {
      const row = current.get(item.messageId);
      return row !== undefined && row.account_id === item.accountId ? row : undefined;
    };
    const found = live.map((i) => rowOf(items[i]!)).filter((row): row is MessageRow => row !== undefined);
    const devices = await this.devicesOf(trx, found);
    const incoming = found.filter((row) => row.direction !== 'outgoing');
    const networkIds = await incomingIdsRepository.incomingNetworkIds(trx, [...new Set(incoming.map((r) => r.id))]);
    const state = new Map<string, Map<string, StoredReaction>>();
    const initially = new Set<string>();
    for (const stored of await reactionsRepository.storedOf(trx, [...new Set(found.map((row) => row.id))])) {
      ofMessage(state, stored.message_id).set(stored.phone, stored);
      initially.add(pairKey(stored.message_id, stored.phone));
    }

    const touched = new Map<string, readonly [string, string]>();
    const queueRows: NewMessageRow[] = [];
    const decided: Decided[] = [];
    for (const i of live) {
      const item = items[i]!;
      const checked = this.checked(rowOf(item), devices, networkIds);
      if (checked instanceof ApiError) {
        outcomes[i] = { kind: 'refused', error: checked };
        // A refused reaction keeps nothing: its key is free again (in this transaction, before anyone sees it).
        if (item.key !== undefined) await idempotencyRepository.releaseIdempotencyKey(trx, item.accountId, item.key);
        continue;
      }
      const { row, device, target } = checked;
      const reactions = ofMessage(state, row.id);
      const changed = (reactions.get(device.phone)?.emoji ?? '') !== item.emoji;
      if (changed) {
        if (item.emoji === '') reactions.delete(device.phone);
        else
          reactions.set(device.phone, {
            message_id: row.id,
            phone: device.phone,
            emoji: item.emoji,
            reacted_at: now,
          });
        touched.set(pairKey(row.id, device.phone), [row.id, device.phone]);
        queueRows.push(queueRow(row, target, item.emoji, now));
      }
      decided.push({ index: i, row, reactions: shownReactions(reactions), queued: changed });
    }

    // The end state of every pair the batch changed: set, or taken away if it was stored before.
    const set: StoredReaction[] = [];
    const taken: Array<readonly [string, string]> = [];
    for (const [key, [messageId, phone]] of touched) {
      const end = state.get(messageId)?.get(phone);
      if (end !== undefined) set.push(end);
      else if (initially.has(key)) taken.push([messageId, phone]);
    }
    await reactionsRepository.writeMany(trx, set, taken);
    await messagesRepository.insertMany(trx, queueRows);
    if (queueRows.length > 0) await this.announce?.(trx, [...new Set(queueRows.map((row) => row.device_id))]);

    const shown = await this.shownParts(
      trx,
      decided.map((d) => d.row),
    );
    for (const { index, row, reactions, queued } of decided) {
      const item = items[index]!;
      const data = presentMessage(
        row,
        undefined,
        hasMemberReceipts(row) ? (shown.receipts.get(row.id) ?? []) : undefined,
        reactions,
        row.type === 'poll' ? shown.votes.get(row.id) : undefined,
        shown.media.get(row.id),
      );
      const answer: SendAnswer = {
        code: 200,
        status: 200,
        message: item.emoji === '' ? 'Reaction removed' : 'Reaction sent',
        data,
      };
      outcomes[index] = { kind: 'ok', answer, queued, deviceId: row.device_id };
      if (item.key !== undefined) {
        await idempotencyRepository.saveIdempotentResponse(trx, item.accountId, item.key, JSON.stringify(answer));
      }
    }
    for (const [i, leader] of followers) outcomes[i] = followerOutcome(items[i]!, items[leader]!, outcomes[leader]!);
    return outcomes as ReactionOutcome[];
  }

  /** The device holding each message's number now, by account and number (known ones are not read again). */
  private async devicesOf(trx: Transaction<Database>, rows: readonly MessageRow[]): Promise<Map<string, DeviceRow>> {
    const devices = new Map<string, DeviceRow>();
    const asked = new Set<string>();
    for (const row of rows) {
      const key = deviceKey(row);
      if (asked.has(key)) continue;
      asked.add(key);
      const device = await this.devices.find(trx, row.account_id, row.device_phone);
      if (device !== undefined) devices.set(key, device);
    }
    return devices;
  }

  /**
   * The message (undefined: not found in the request's account, or gone since the request was checked), its device
   * (allowed to act now) and the message as the network knows it; or the refusal.
   */
  private checked(
    row: MessageRow | undefined,
    devices: ReadonlyMap<string, DeviceRow>,
    networkIds: ReadonlyMap<string, string>,
  ):
    | {
        readonly row: MessageRow;
        readonly device: DeviceRow & { readonly phone: string };
        readonly target: QuotedMessage;
      }
    | ApiError {
    if (row === undefined) return new ApiError('MESSAGE_NOT_FOUND');
    const device = this.devices.check(row, devices.get(deviceKey(row)));
    if (device instanceof ApiError) return device;
    const target = targetOf(row, networkIds);
    return target instanceof ApiError ? target : { row, device, target };
  }

  /** What the answers show beside the reactions: group receipts, poll votes, incoming media (one read each). */
  private async shownParts(trx: Transaction<Database>, rows: readonly MessageRow[]) {
    const idsWhere = (keep: (row: MessageRow) => boolean) => [...new Set(rows.filter(keep).map((row) => row.id))];
    const withReceipts = idsWhere(hasMemberReceipts);
    const polls = idsWhere((row) => row.type === 'poll');
    const incoming = this.incomingMedia === undefined ? [] : idsWhere((row) => row.direction === 'incoming');
    return {
      receipts: withReceipts.length === 0 ? new Map() : await receiptsRepository.forMessages(trx, withReceipts),
      votes: polls.length === 0 ? new Map() : await pollVotesRepository.forMessages(trx, polls),
      media: incoming.length === 0 ? new Map() : await this.incomingMedia!.shown(incoming, trx),
    };
  }
}

/**
 * A request whose key an earlier request of the batch claimed answers as if that one's answer were stored: its
 * answer, 409 for another body; a refused leader kept no key, and the same request would be refused alike.
 */
function followerOutcome(item: ReactionRequest, leader: ReactionRequest, outcome: ReactionOutcome): ReactionOutcome {
  switch (outcome.kind) {
    case 'ok':
      return { kind: 'replay', requestHash: leader.requestHash, response: JSON.stringify(outcome.answer) };
    case 'replay':
      return outcome;
    case 'refused':
      return item.requestHash === leader.requestHash
        ? outcome
        : { kind: 'replay', requestHash: leader.requestHash, response: '' };
  }
}

/** The target as the network knows it (ours by our id, a received one by the network's id), or the refusal. */
function targetOf(row: MessageRow, networkIds: ReadonlyMap<string, string>): QuotedMessage | ApiError {
  // It never reached anyone: there is nothing on the network to react to.
  if (row.direction === 'outgoing' && row.status === 'failed') {
    return new ApiError('VALIDATION_FAILED', { errors: { id: [FAILED_TARGET] } });
  }
  const target = actionTarget(row);
  if (row.direction === 'outgoing') return target;
  const networkId = networkIds.get(networkIdKey(row.device_id, row.id));
  return networkId === undefined ? new ApiError('MESSAGE_NOT_FOUND') : { ...target, id: networkId };
}

const deviceKey = (row: MessageRow) => `${row.account_id}\u0000${row.device_phone}`;

function ofMessage(state: Map<string, Map<string, StoredReaction>>, messageId: string): Map<string, StoredReaction> {
  let reactions = state.get(messageId);
  if (reactions === undefined) {
    reactions = new Map();
    state.set(messageId, reactions);
  }
  return reactions;
}

const pairKey = (messageId: string, phone: string) => `${messageId}\u0000${phone}`;

/** A message's reactions as reactionsRepository.forMessages reads them: oldest first, then by phone. */
function shownReactions(reactions: ReadonlyMap<string, StoredReaction>): ReactionRow[] {
  return [...reactions.values()]
    .sort((a, b) => a.reacted_at - b.reacted_at || (a.phone < b.phone ? -1 : a.phone > b.phone ? 1 : 0))
    .map((r) => ({ from: r.phone, emoji: r.emoji }));
}

/** The queue row of a reaction: the device's next in order, never counted, no receipts expected. */
function queueRow(row: MessageRow, target: QuotedMessage, emoji: string, now: number): NewMessageRow {
  return pendingQueueRow(
    {
      account_id: row.account_id,
      device_id: row.device_id,
      direction: 'action',
      type: 'reaction',
      device_phone: row.device_phone,
      receiver: target.chat,
      message: emoji,
      file_url: null,
      params: JSON.stringify({ message_id: row.id, emoji }),
      simulate_typing: 0,
      quoted: JSON.stringify(target),
    },
    now,
  );
}
