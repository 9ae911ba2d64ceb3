/**
 * Durable acceptance of messages in batches: every request that arrives while
 * a commit is in flight joins the next one, and a batch costs a few
 * statements, not a few per message: one statement that locks the senders'
 * quota rows and takes the batch's units, one multi-row insert.
 *
 * Owns: the exact allotment of quota within a batch (requests are served in
 * arrival order; a device with k units left accepts its first k), the
 * Idempotency-Key claims, and the rows written for an accepted message.
 * Must never: answer before the batch commits, or take quota for a message it
 * does not store.
 */
import type { Transaction } from 'kysely';
import { touchChats } from '../chats/maintain.js';
import type { Clock } from '../clock.js';
import type { DeviceRow } from '../devices/repository.js';
import type { Committer } from '../store/batcher.js';
import type { Database } from '../store/schema.js';
import { SUCCESS_MESSAGES, presentMessage, type MessageJson } from './present.js';
import type { QuotedMessage } from '../network/network.js';
import { messagesRepository, type MessageRow } from './repository.js';
import { claimBatchKeys } from './batch-keys.js';
import { idempotencyRepository } from './idempotency-repository.js';
import { messageMediaRepository } from './media-repository.js';
import { quotaRepository } from './quota-repository.js';
import { pendingQueueRow } from './queue-row.js';
import type { ValidatedMessage } from './validate.js';

export const IDEMPOTENCY_WINDOW_MS = 24 * 60 * 60 * 1000;

export interface SendAnswer {
  readonly code: 200;
  readonly status: 200;
  readonly message: string;
  readonly data: MessageJson;
}

export interface AcceptRequest {
  readonly accountId: number;
  readonly device: DeviceRow;
  readonly request: ValidatedMessage;
  /** The media streamed into the store before acceptance (`media_chunks`), or null. */
  readonly media: { readonly mediaId: string; readonly mimetype: string } | null;
  readonly idempotencyKey: string | undefined;
  readonly requestHash: string;
  /** The message a reply quotes, resolved from `params.quotedMessageId`; absent when it is no reply. */
  readonly quoted?: QuotedMessage;
}

export type AcceptOutcome =
  | { readonly kind: 'ok'; readonly answer: SendAnswer }
  | { readonly kind: 'quota' }
  | { readonly kind: 'replay'; readonly requestHash: string; readonly response: string };

export class AcceptanceWriter {
  private readonly submit: (request: AcceptRequest) => Promise<AcceptOutcome>;

  constructor(
    committer: Committer,
    private readonly clock: Clock,
    /** Called in the accepting transaction with the devices that got messages (wakes the nodes holding them). */
    private readonly announce: (trx: Transaction<Database>, deviceIds: readonly number[]) => Promise<void> = async () =>
      undefined,
  ) {
    this.submit = committer.channel((trx, items: AcceptRequest[]) => this.write(trx, items));
  }

  accept(request: AcceptRequest): Promise<AcceptOutcome> {
    return this.submit(request);
  }

  private async write(trx: Transaction<Database>, items: AcceptRequest[]): Promise<AcceptOutcome[]> {
    const now = this.clock.now();
    const outcomes: Array<AcceptOutcome | undefined> = new Array(items.length);

    // A key claimed earlier in this batch: the later request waits for that one's outcome (docs/internals.md, Sending, issue 10).
    const keyed = items.map((item) => ({
      accountId: item.accountId,
      key: item.idempotencyKey,
      requestHash: item.requestHash,
    }));
    const { replays, followers } = await claimBatchKeys(trx, keyed, now, IDEMPOTENCY_WINDOW_MS);
    for (const [i, replay] of replays) outcomes[i] = { kind: 'replay', ...replay };

    // What each device wants, then what it gets (what is left if less): its first ones in arrival order are accepted.
    const wanted = new Map<number, number>();
    for (const [i, item] of items.entries()) {
      if (outcomes[i] !== undefined || followers.has(i)) continue;
      wanted.set(item.device.id, (wanted.get(item.device.id) ?? 0) + 1);
    }
    const taken = await quotaRepository.takeUnits(trx, wanted);
    const left = new Map(taken);
    const rows: Array<Omit<MessageRow, 'seq'>> = [];
    for (const [i, item] of items.entries()) {
      if (outcomes[i] !== undefined || followers.has(i)) continue;
      const remaining = left.get(item.device.id) ?? 0;
      if (remaining <= 0) {
        outcomes[i] = { kind: 'quota' };
        if (item.idempotencyKey !== undefined) {
          await idempotencyRepository.releaseIdempotencyKey(trx, item.accountId, item.idempotencyKey);
        }
        continue;
      }
      left.set(item.device.id, remaining - 1);
      const row = messageRow(item, now);
      rows.push(row);
      const answer: SendAnswer = {
        code: 200,
        status: 200,
        message: SUCCESS_MESSAGES[item.request.type] ?? 'Message sent successfully',
        data: presentMessage({ ...row, seq: 0 }, item.request.params),
      };
      outcomes[i] = { kind: 'ok', answer };
    }

    await messagesRepository.insertMany(trx, rows);
    // The chat list, in the same transaction: one upsert for the batch (src/chats/maintain.ts).
    await touchChats(trx, rows, now);
    const served = [...taken].filter(([, units]) => units > 0).map(([deviceId]) => deviceId);
    if (served.length > 0) await this.announce(trx, served);
    for (const [i, item] of items.entries()) {
      const outcome = outcomes[i];
      if (outcome?.kind !== 'ok') continue;
      if (item.media !== null) {
        await messageMediaRepository.insertMedia(trx, outcome.answer.data.id, item.media.mimetype, item.media.mediaId);
      }
      if (item.idempotencyKey !== undefined) {
        await idempotencyRepository.saveIdempotentResponse(
          trx,
          item.accountId,
          item.idempotencyKey,
          JSON.stringify(outcome.answer),
        );
      }
    }
    for (const [i, leader] of followers) outcomes[i] = followerOutcome(items[i]!, items[leader]!, outcomes[leader]!);
    return outcomes as AcceptOutcome[];
  }
}

/**
 * What a request answers whose key an earlier request of the same batch
 * claimed: that request's answer, as if it had been stored already; a
 * different body is a reuse of the key. A leader refused for quota claimed
 * nothing, and the same request would be refused alike.
 */
function followerOutcome(item: AcceptRequest, leader: AcceptRequest, outcome: AcceptOutcome): AcceptOutcome {
  switch (outcome.kind) {
    case 'ok':
      return { kind: 'replay', requestHash: leader.requestHash, response: JSON.stringify(outcome.answer) };
    case 'replay':
      return outcome;
    case 'quota':
      return item.requestHash === leader.requestHash
        ? outcome
        : { kind: 'replay', requestHash: leader.requestHash, response: '' };
  }
}

function messageRow(item: AcceptRequest, now: number): Omit<MessageRow, 'seq'> {
  const { request } = item;
  // Ids are drawn in arrival order inside the batch, so they sort as the queue does.
  return pendingQueueRow(
    {
      account_id: item.accountId,
      device_id: item.device.id,
      direction: 'outgoing',
      type: request.type,
      device_phone: request.device,
      receiver: request.receiver ?? '',
      message: request.message,
      file_url: request.media?.url ?? null,
      params: JSON.stringify(request.params),
      simulate_typing: request.simulateTyping,
      quoted: item.quoted === undefined ? null : JSON.stringify(item.quoted),
    },
    now,
  );
}
