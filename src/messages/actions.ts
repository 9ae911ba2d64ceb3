/**
 * Message actions (docs/api.md, Message actions; docs/internals.md, Message actions): react, edit, cancel or delete
 * for everyone, mark read, forward.
 *
 * Owns: what each action may do to which message, decided and recorded in one transaction with its Idempotency-Key
 * (reactions: with the other reactions of the batch, reaction-writer.ts) and the queue row that carries it to the
 * network (a row of `messages` with `direction = 'action'`, in the device's order after the messages before it,
 * paced and retried as they are, never counted against the quota). The change
 * is recorded when the action is accepted, so the answer shows it; the network hears of it when the queue gets to it.
 * Must never: let two requests (or a request and the dispatcher) both win over one message (every decision is one
 * statement: actions-repository.ts), take quota for an action, or give a cancelled message's unit back twice.
 */
import type { Transaction } from 'kysely';
import { chatRead } from '../chats/maintain.js';
import type { Clock } from '../clock.js';
import type { DeviceRow } from '../devices/repository.js';
import { ApiError } from '../errors.js';
import { findForwardableMedia } from '../media/index.js';
import { recordEvent } from '../events/record.js';
import type { QuotedMessage } from '../network/network.js';
import type { Database, Db } from '../store/schema.js';
import type { Committer } from '../store/batcher.js';
import type { Store } from '../store/store.js';
import { IDEMPOTENCY_WINDOW_MS, type SendAnswer } from './acceptance.js';
import { ActionBatches } from './action-batches.js';
import { actionsRepository } from './actions-repository.js';
import {
  actionTarget,
  chatOf,
  editedParams,
  forwardBody,
  receivedMediaSource,
  validateEditText,
  validateEmoji,
} from './actions-rules.js';
import { idempotencyRepository } from './idempotency-repository.js';
import { replayAnswer, replayOfStoredKey } from './idempotent-replay.js';
import { incomingIdsRepository } from './incoming-ids-repository.js';
import { messageMediaRepository } from './media-repository.js';
import { MessageLookups } from './message-lookups.js';
import { hasMemberReceipts, presentMessage } from './present.js';
import { pollVotesRepository } from './poll-votes.js';
import { quotaRepository } from './quota-repository.js';
import { pendingQueueRow } from './queue-row.js';
import { ReactionWriter, type ReactionRequest } from './reaction-writer.js';
import { reactionsRepository } from './reactions.js';
import { receiptsRepository } from './receipts.js';
import { messagesRepository, type MessageRow } from './repository.js';
import type { MediaOfMessages } from './reads.js';
import { hashBody, type MessagesService, type SenderDirectory } from './service.js';

export { FAILED_TARGET } from './reaction-writer.js';

/** `failed_reason` of a message cancelled while it waited in the queue. */
export const REASON_CANCELLED = 'cancelled';

export interface MessageActionsOptions {
  readonly store: Store;
  /** The shared commit stream: on SQLite actions are written in batches shared with sends (action-batches.ts). */
  readonly committer: Committer;
  readonly clock: Clock;
  readonly senders: SenderDirectory;
  /** Forwarding is a send: the message service accepts it. */
  readonly messages: MessagesService;
  /** Told after a commit that queued an action, so the device's queue moves. */
  readonly onAccepted: (deviceId: number) => void;
  /** Called in the accepting transaction with the device that got an action (wakes the node holding it). */
  readonly announce?: (trx: Transaction<Database>, deviceIds: readonly number[]) => Promise<void>;
  /** Incoming messages' media as the message object shows it, and the gateway's own URL of it (src/media/). */
  readonly incomingMedia?: MediaOfMessages;
}

type ActionKind = 'edit' | 'delete' | 'read';

/** What one accepted action does in its transaction: the answer, and the queue row to add (null: nothing to send). */
interface Decision {
  readonly message: string;
  readonly row: MessageRow;
  readonly queue: {
    readonly type: ActionKind;
    readonly chat: string;
    readonly text: string | null;
    readonly params: Record<string, unknown>;
    readonly target: QuotedMessage | null;
  } | null;
}

export class MessageActions {
  private readonly batches: ActionBatches;
  private readonly reactions: ReactionWriter;
  private readonly lookups: MessageLookups;

  constructor(private readonly options: MessageActionsOptions) {
    this.lookups = new MessageLookups(options.store.db);
    this.batches = new ActionBatches(options.committer, options.store.db);
    this.reactions = new ReactionWriter(options.committer, options.clock, options.announce, options.incomingMedia);
  }

  /**
   * `POST /messages/{id}/reaction {emoji}`: checked as every action is, then decided and written with the other
   * reactions of the next shared commit in multi-row statements, on both stores (reaction-writer.ts).
   */
  async react(accountId: number, id: string, body: unknown, key: string | undefined): Promise<SendAnswer> {
    const emoji = validateEmoji(body);
    const checked = await this.check(accountId, id, { action: 'reaction', emoji }, key, true);
    if ('answer' in checked) return checked.answer;
    const request: ReactionRequest = { accountId, emoji, key, ...checked };
    const outcome = await this.reactions.accept(request);
    switch (outcome.kind) {
      case 'refused':
        throw outcome.error;
      case 'replay':
        return replayAnswer(outcome.requestHash, checked.requestHash, outcome.response);
      case 'ok':
        if (outcome.queued) this.options.onAccepted(checked.found.device_id);
        return outcome.answer;
    }
  }

  /** `PATCH /messages/{id} {text}`. */
  async edit(accountId: number, id: string, body: unknown, key: string | undefined): Promise<SendAnswer> {
    const text = validateEditText(body);
    return this.act(accountId, id, { action: 'edit', text }, key, true, async (trx, row) => {
      const edited = await actionsRepository.edit(trx, row.id, text, editedParams(row, text), this.options.clock.now());
      if (edited === undefined) throw new ApiError('MESSAGE_NOT_EDITABLE', { error: EDIT_RULE });
      const target = actionTarget(edited);
      return {
        message: 'Message edited',
        row: edited,
        queue: { type: 'edit', chat: target.chat, text, params: { message_id: row.id, text }, target },
      };
    });
  }

  /** `DELETE /messages/{id}`: cancel while queued, else delete for everyone within the window. */
  async remove(accountId: number, id: string, key: string | undefined): Promise<SendAnswer> {
    return this.act(accountId, id, { action: 'delete' }, key, false, async (trx, row, device) => {
      const now = this.options.clock.now();
      // A delete for everyone goes through the network: the device must be connected for it (a cancel needs nothing).
      if (row.status !== 'pending') this.requireConnected(device);
      const ended = await actionsRepository.cancelOrDelete(trx, row.id, now, REASON_CANCELLED);
      if (ended === undefined) throw new ApiError('MESSAGE_NOT_DELETABLE', { error: DELETE_RULE });
      if (ended.status === 'failed') {
        // It never reached the network: its media goes and its unit of quota comes back, in the statement's transaction.
        await messageMediaRepository.deleteMediaOf(trx, [ended.id]);
        await quotaRepository.giveBackQuota(trx, ended.device_id);
        await recordEvent(trx, device, 'message.failed', presentMessage(ended), now);
        return { message: 'Message cancelled', row: ended, queue: null };
      }
      const target = actionTarget(ended);
      return {
        message: 'Message deleted',
        row: ended,
        queue: { type: 'delete', chat: target.chat, text: null, params: { message_id: row.id }, target },
      };
    });
  }

  /** `POST /messages/{id}/read`: the message and every earlier unread one of its chat. */
  async read(accountId: number, id: string, key: string | undefined): Promise<SendAnswer> {
    return this.act(accountId, id, { action: 'read' }, key, true, async (trx, row) => {
      if (row.direction !== 'incoming') {
        throw new ApiError('MESSAGE_NOT_READABLE', { error: 'only a message the device received can be marked read' });
      }
      const chat = chatOf(row);
      const direct = chat === row.sender;
      const candidates = await actionsRepository.unreadUpTo(trx, row.device_id, row.seq, direct ? row.sender : null);
      const ofChat = candidates.filter((candidate) => chatOf(candidate) === chat);
      const now = this.options.clock.now();
      const marked = await actionsRepository.markRead(
        trx,
        ofChat.map((m) => m.id),
        now,
      );
      // The chat's unread count, in the same transaction (src/chats/maintain.ts).
      await chatRead(trx, row.device_id, chat, marked.size, now);
      const targets: QuotedMessage[] = [];
      for (const message of ofChat) {
        if (!marked.has(message.id)) continue;
        const networkId = await incomingIdsRepository.incomingNetworkId(trx, message.device_id, message.id);
        if (networkId !== undefined) targets.push({ ...actionTarget(message), id: networkId });
      }
      const current = (await messagesRepository.find(trx, accountId, row.id)) ?? row;
      return {
        message: 'Message read',
        row: current,
        queue:
          targets.length === 0
            ? null
            : {
                type: 'read',
                chat,
                text: null,
                params: {
                  message_id: row.id,
                  message_ids: ofChat.filter((m) => marked.has(m.id)).map((m) => m.id),
                  targets,
                },
                target: null,
              },
      };
    });
  }

  /** `POST /messages/{id}/forward {receiver}`: a new message with the stored content, sent as any other. */
  async forward(accountId: number, id: string, body: unknown, key: string | undefined): Promise<SendAnswer> {
    const row = await messagesRepository.find(this.options.store.db, accountId, id);
    if (row === undefined) throw new ApiError('MESSAGE_NOT_FOUND');
    const receiver = body !== null && typeof body === 'object' ? (body as { receiver?: unknown }).receiver : undefined;
    // Received media goes on from the store; the forward names it by the gateway's own URL of it.
    const source = receivedMediaSource(row);
    const media = source === null ? undefined : await findForwardableMedia(this.options.store.db, source);
    const url = media === undefined ? undefined : this.options.incomingMedia?.plainUrl(media.mediaId);
    const { stored, ...content } = forwardBody(row, media && url ? { media, url } : undefined);
    return this.options.messages.forward(
      accountId,
      { device: row.device_phone, receiver, ...content },
      key,
      row.id,
      stored === undefined ? undefined : { media: stored, from: source! },
    );
  }

  /**
   * The common path: the message is found (404 otherwise), the request's key replayed or claimed, the decision made
   * and its queue row written in one transaction, then the queue told.
   */
  private async act(
    accountId: number,
    id: string,
    request: Record<string, unknown>,
    key: string | undefined,
    needsConnection: boolean,
    decide: (trx: Transaction<Database>, row: MessageRow, device: DeviceRow) => Promise<Decision>,
  ): Promise<SendAnswer> {
    const { clock } = this.options;
    const checked = await this.check(accountId, id, request, key, needsConnection);
    if ('answer' in checked) return checked.answer;
    const { found, device, requestHash } = checked;
    // In the next shared commit, with the actions (and sends) that arrive meanwhile (action-batches.ts).
    const outcome = await this.batches.run(async (trx) => {
      if (key !== undefined) {
        const now = clock.now();
        const claim = await idempotencyRepository.claimIdempotencyKey(
          trx,
          accountId,
          key,
          requestHash,
          now,
          now - IDEMPOTENCY_WINDOW_MS,
        );
        if (!claim.claimed) {
          return { answer: replayAnswer(claim.requestHash, requestHash, claim.response), queued: false };
        }
      }
      // Read again inside the transaction: the decision is made on the row as it is now.
      const row = (await messagesRepository.find(trx, accountId, id)) ?? found;
      const decision = await decide(trx, row, device);
      if (decision.queue !== null) {
        await actionsRepository.insertAction(trx, actionRow(row, decision.queue, clock.now()));
        await this.options.announce?.(trx, [row.device_id]);
      }
      const answer: SendAnswer = {
        code: 200,
        status: 200,
        message: decision.message,
        data: await shown(trx, decision.row, this.options.incomingMedia),
      };
      if (key !== undefined)
        await idempotencyRepository.saveIdempotentResponse(trx, accountId, key, JSON.stringify(answer));
      return { answer, queued: decision.queue !== null };
    });
    if (outcome.queued) this.options.onAccepted(found.device_id);
    return outcome.answer;
  }

  /**
   * What every action checks before its transaction: the key's live earlier answer (replayed), the message (404
   * otherwise), its device still paired with its number and, when the action needs the network, connected.
   */
  private async check(
    accountId: number,
    id: string,
    request: Record<string, unknown>,
    key: string | undefined,
    needsConnection: boolean,
  ): Promise<
    | { readonly answer: SendAnswer }
    | {
        readonly found: MessageRow;
        readonly device: DeviceRow & { readonly phone: string };
        readonly requestHash: string;
      }
  > {
    const { store, clock } = this.options;
    const requestHash = key === undefined ? '' : hashBody({ ...request, message_id: id });
    if (key !== undefined) {
      const replay = await replayOfStoredKey(store.db, clock.now(), accountId, key, requestHash);
      if (replay !== null) return { answer: replay };
    }
    const found = await this.lookups.find(accountId, id);
    if (found === undefined) throw new ApiError('MESSAGE_NOT_FOUND');
    const device = await this.options.senders.findByPhone(accountId, found.device_phone);
    if (device === undefined || device.id !== found.device_id || device.phone === null) {
      throw new ApiError('DEVICE_NOT_CONNECTED', { error: 'the message’s device is no longer paired with its number' });
    }
    if (needsConnection) this.requireConnected(device);
    return { found, device: { ...device, phone: device.phone }, requestHash };
  }

  private requireConnected(device: DeviceRow): void {
    if (device.status === 'SUSPENDED') throw new ApiError('DEVICE_SUSPENDED');
    if (!this.options.senders.isConnected(device)) throw new ApiError('DEVICE_NOT_CONNECTED');
  }
}

const EDIT_RULE =
  'only a chat text or media caption of ours can be edited, once sent, within 15 minutes of being sent, and not once deleted';
const DELETE_RULE =
  'a message of ours is cancelled while it waits in the queue, or deleted for everyone once sent and within 48 hours; it is not while it is being sent, after it failed or was deleted, or later';

/** The queue row of an action: the device's next in order, never counted, no receipts expected. */
function actionRow(row: MessageRow, queue: NonNullable<Decision['queue']>, now: number) {
  return pendingQueueRow(
    {
      account_id: row.account_id,
      device_id: row.device_id,
      direction: 'action',
      type: queue.type,
      device_phone: row.device_phone,
      receiver: queue.chat,
      message: queue.text,
      file_url: null,
      params: JSON.stringify(queue.params),
      simulate_typing: 0,
      quoted: queue.target === null ? null : JSON.stringify(queue.target),
    },
    now,
  );
}

/**
 * The message object as GET /messages/{id} shows it: with its reactions, a poll's tally, its members' receipts in a
 * group, and an incoming message's media (its status and signed `file_url`).
 */
async function shown(db: Db, row: MessageRow, incomingMedia: MediaOfMessages | undefined) {
  const receipts = hasMemberReceipts(row)
    ? ((await receiptsRepository.forMessages(db, [row.id])).get(row.id) ?? [])
    : undefined;
  const reactions = (await reactionsRepository.forMessages(db, [row.id])).get(row.id);
  const votes = row.type === 'poll' ? (await pollVotesRepository.forMessages(db, [row.id])).get(row.id) : undefined;
  const media =
    row.direction === 'incoming' && incomingMedia !== undefined
      ? (await incomingMedia.shown([row.id], db)).get(row.id)
      : undefined;
  return presentMessage(row, undefined, receipts, reactions, votes, media);
}
