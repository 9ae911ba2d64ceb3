/**
 * Accepting messages (spec 4.5; docs/internals.md, Quota; Sending): the accept path of `POST /messages`,
 * the group send and reactions from reply by response. Reads are MessageReads' (reads.ts), and this
 * service hands them on; media is fetched and checked by MediaFetcher (media-fetch.ts); what a stored
 * message becomes on the network is network-content.ts.
 *
 * Owns: the order of checks of `POST /messages` (validation, idempotency,
 * the sending device, media fetched and checked, quota), and durable
 * acceptance: the answer is given only after the message, its media and its
 * quota unit are committed, in a transaction shared with concurrent requests
 * (group commit). Sending is the dispatcher's job; it is told after commit.
 * Must never: answer 200 for a message that is not committed, or take quota
 * for one that is not stored.
 */
import { createHash } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { Dispatcher as HttpDispatcher } from 'undici';
import type { Clock } from '../clock.js';
import { ApiError } from '../errors.js';
import type { ForwardableMedia } from '../media/index.js';
import { STORE_RETRY_AFTER_S } from '../store/faults.js';
import type { Db } from '../store/schema.js';
import type { Store } from '../store/store.js';
import type { DeviceRow } from '../devices/repository.js';
import { replayAnswer, replayOfStoredKey } from './idempotent-replay.js';
import { validateSendRequest, type ValidatedMessage } from './validate.js';
import { MediaFetcher, withFileName } from './media-fetch.js';
import type { MessageJson } from './present.js';
import { MessageReads, type MediaOfMessages, type MessageFilter } from './reads.js';
import { resolveQuote } from './quotes.js';
import { validateReaction, type ReactionRequest } from './reaction.js';
import { deviceGroup, isGroupJid } from '../groups/lookup.js';
import type { AcceptanceWriter, SendAnswer } from './acceptance.js';

/** A send refused while the device reconnects after a store fault: the store's own 503, with Retry-After. */
function reconnectingAfterStoreFault(): ApiError {
  return new ApiError('STORE_UNAVAILABLE', {
    error: 'the device is reconnecting after the store was out of service; retry shortly',
    headers: { 'retry-after': String(STORE_RETRY_AFTER_S) },
  });
}

/** What the message service needs to know about devices and their connections. */
export interface SenderDirectory {
  /** The account's device with this number (not deleted), if any. */
  findByPhone(accountId: number, phone: string): Promise<DeviceRow | undefined>;
  /**
   * As findByPhone, from inside a transaction: a device not known from the last moment is read through `db` (on
   * SQLite the store's one connection is the transaction's, so a read outside it would wait for it).
   */
  findByPhoneIn(db: Db, accountId: number, phone: string): Promise<DeviceRow | undefined>;
  /** Whether the device's connection is open now, here or (in a cluster) on the node holding it. */
  isConnected(device: DeviceRow): boolean;
  /** Not connected because its connection is being re-established after a store fault (see ConnectionManager). */
  isRecovering?(device: DeviceRow): boolean;
}

/** Received media a forward sends from the store, and the received message it is the media of. */
export interface StoredForward {
  readonly media: ForwardableMedia;
  readonly from: string;
}

export interface MessagesServiceOptions {
  readonly store: Store;
  readonly writer: AcceptanceWriter;
  readonly clock: Clock;
  readonly senders: SenderDirectory;
  readonly mediaDispatcher: HttpDispatcher;
  /** Told after each commit so the device's queue moves. */
  readonly onAccepted: (deviceId: number) => void;
  readonly mediaTimeoutMs?: number;
  /** Operator log: media refusals are noted at info (never the URL: it may carry a token). */
  readonly logger?: FastifyBaseLogger;
  /** Incoming messages' media as the message object shows it (src/media/). */
  readonly incomingMedia?: MediaOfMessages;
}

export class MessagesService {
  private readonly media: MediaFetcher;
  private readonly reads: MessageReads;

  constructor(private readonly options: MessagesServiceOptions) {
    this.media = new MediaFetcher({
      store: options.store,
      clock: options.clock,
      dispatcher: options.mediaDispatcher,
      timeoutMs: options.mediaTimeoutMs ?? 10_000,
      logger: options.logger,
    });
    this.reads = new MessageReads(options.store, options.senders, options.incomingMedia);
  }

  async send(accountId: number, body: unknown, idempotencyKey: string | undefined): Promise<SendAnswer> {
    const request = validateSendRequest(body, { requireReceiver: true });
    const requestHash = idempotencyKey === undefined ? '' : hashBody(body);
    if (idempotencyKey !== undefined) {
      const replay = await this.replay(accountId, idempotencyKey, requestHash);
      if (replay !== null) return replay;
    }
    const device = await this.sendingDevice(accountId, request.device, request.receiver);
    return this.acceptFrom(accountId, device, request, idempotencyKey, requestHash);
  }

  /**
   * Group send (`POST /groups/{id}/send`, docs/internals.md, Sending; Groups): the `/messages`
   * body without `receiver`, through the same validation, quota, acceptance
   * and queue; the network receiver is the group. `device` may be left out
   * (the group's device acts); when given it must be that device.
   */
  async sendToGroup(
    accountId: number,
    body: unknown,
    group: { readonly deviceId: number; readonly devicePhone: string | null; readonly networkId: string },
    idempotencyKey: string | undefined,
  ): Promise<SendAnswer> {
    const withDevice =
      body !== null && typeof body === 'object' && !Array.isArray(body) && (body as { device?: unknown }).device == null
        ? { ...body, device: group.devicePhone }
        : body;
    const validated = validateSendRequest(withDevice, { requireReceiver: false });
    // The group is part of the request: the same key and body for another group is another request.
    const requestHash = idempotencyKey === undefined ? '' : hashBody({ group: group.networkId, body: withDevice });
    if (idempotencyKey !== undefined) {
      const replay = await this.replay(accountId, idempotencyKey, requestHash);
      if (replay !== null) return replay;
    }
    const device = await this.options.senders.findByPhone(accountId, validated.device);
    if (device === undefined || device.id !== group.deviceId) {
      throw new ApiError('VALIDATION_FAILED', { errors: { device: ['must be the number of the group’s device'] } });
    }
    return this.acceptFrom(accountId, device, { ...validated, receiver: group.networkId }, idempotencyKey, requestHash);
  }

  /**
   * A reaction from reply by response (reaction.ts): the same checks of the device, quota and durable
   * acceptance as a send; the target is resolved as a reply's quote is, so it must be a message of
   * this device. The idempotency key is the reply's, as for a send.
   */
  async react(accountId: number, reaction: ReactionRequest, idempotencyKey: string | undefined): Promise<SendAnswer> {
    const request = validateReaction(reaction);
    const requestHash = idempotencyKey === undefined ? '' : hashBody({ reaction });
    if (idempotencyKey !== undefined) {
      const replay = await this.replay(accountId, idempotencyKey, requestHash);
      if (replay !== null) return replay;
    }
    const device = await this.sendingDevice(accountId, request.device);
    return this.acceptFrom(accountId, device, request, idempotencyKey, requestHash);
  }

  /**
   * Forwarding (`POST /messages/{id}/forward`, actions.ts): `body` is the forwarded message's content with the
   * request's receiver, sent as any other (validated, counted), its params marked `forwarded` so the network shows it
   * so. The key's request is the forward of that message to that receiver.
   */
  async forward(
    accountId: number,
    body: Record<string, unknown>,
    idempotencyKey: string | undefined,
    sourceId: string,
    stored?: StoredForward,
  ): Promise<SendAnswer> {
    const validated = validateSendRequest(body, { requireReceiver: true });
    // Received media sent on names the received message it came from, so a forward of this one sends it on again.
    const marks = stored === undefined ? { forwarded: true } : { forwarded: true, forwarded_from: stored.from };
    const request = { ...validated, params: { ...validated.params, ...marks } };
    const requestHash = idempotencyKey === undefined ? '' : hashBody({ forward: sourceId, receiver: body.receiver });
    if (idempotencyKey !== undefined) {
      const replay = await this.replay(accountId, idempotencyKey, requestHash);
      if (replay !== null) return replay;
    }
    const device = await this.sendingDevice(accountId, request.device, request.receiver);
    return this.acceptFrom(accountId, device, request, idempotencyKey, requestHash, stored?.media);
  }

  /**
   * The device that sends from `phone` (DEVICE_NOT_FOUND when the account has none). To a group's network id as the
   * receiver (docs/internals.md, Whatspie compatibility), a group send: the device must be in that group.
   */
  private async sendingDevice(accountId: number, phone: string, receiver: string | null = null): Promise<DeviceRow> {
    const device = await this.options.senders.findByPhone(accountId, phone);
    if (device === undefined) throw new ApiError('DEVICE_NOT_FOUND');
    if (isGroupJid(receiver)) {
      const group = await deviceGroup(this.options.store.db, accountId, device.id, receiver);
      if (group === undefined) {
        throw new ApiError('GROUP_NOT_FOUND', { error: 'the sending device is not in a group with this id' });
      }
    }
    return device;
  }

  /**
   * The part of a send after the device is known: it must be able to send now; media is fetched (or, for received
   * media sent on, copied in the store); then the durable accept.
   */
  private async acceptFrom(
    accountId: number,
    device: DeviceRow,
    request: ValidatedMessage,
    idempotencyKey: string | undefined,
    requestHash: string,
    stored?: ForwardableMedia,
  ): Promise<SendAnswer> {
    if (device.status === 'SUSPENDED') throw new ApiError('DEVICE_SUSPENDED');
    // An open connection means paired; a device not connected right now cannot take messages.
    if (!this.options.senders.isConnected(device)) {
      // Being reconnected because the store failed it: unavailable for a moment (retry), not disconnected (give up).
      if (this.options.senders.isRecovering?.(device) === true) throw reconnectingAfterStoreFault();
      throw new ApiError('DEVICE_NOT_CONNECTED');
    }
    const quoted =
      request.quotedMessageId === undefined
        ? undefined
        : await resolveQuote(this.options.store.db, accountId, device.id, request.quotedMessageId);
    const media =
      request.media === null
        ? null
        : stored === undefined
          ? await this.media.fetch(request.media)
          : await this.media.fromStore(request.media, stored);
    if (media !== null) request = withFileName(request, media.contentDisposition);
    let outcome: Awaited<ReturnType<AcceptanceWriter['accept']>>;
    try {
      outcome = await this.options.writer.accept({
        accountId,
        device,
        request,
        media,
        idempotencyKey,
        requestHash,
        ...(quoted === undefined ? {} : { quoted }),
      });
    } catch (error) {
      if (media !== null) await this.media.discard(media.mediaId);
      throw error;
    }
    // Media of a request that became no message is not kept.
    if (media !== null && outcome.kind !== 'ok') await this.media.discard(media.mediaId);
    if (outcome.kind === 'quota') {
      throw new ApiError('QUOTA_EXCEEDED', { error: 'this device has no messages left on its plan' });
    }
    if (outcome.kind === 'replay') return replayAnswer(outcome.requestHash, requestHash, outcome.response);
    this.options.onAccepted(device.id);
    return outcome.answer;
  }

  get(accountId: number, id: string): Promise<MessageJson> {
    return this.reads.get(accountId, id);
  }

  list(accountId: number, filter: MessageFilter): Promise<{ data: MessageJson[]; next_cursor: string | null }> {
    return this.reads.list(accountId, filter);
  }

  private replay(accountId: number, key: string, requestHash: string): Promise<SendAnswer | null> {
    return replayOfStoredKey(this.options.store.db, this.options.clock.now(), accountId, key, requestHash);
  }
}

export function hashBody(body: unknown): string {
  return createHash('sha256').update(stableJson(body)).digest('hex');
}

/** JSON with object keys sorted, so the same body in another key order is the same request. */
function stableJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${stableJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}
