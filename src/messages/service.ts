/**
 * Accepting messages (spec 4.5; docs/internals.md, Quota; Sending) and looking them up.
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
import { ApiError } from '../http/errors.js';
import { STORE_RETRY_AFTER_S } from '../store/faults.js';
import type { NetworkMessageContent, OutgoingNetworkMessage, QuotedMessage } from '../network/network.js';
import {
  MediaFetchError,
  PRIVATE_DESTINATION_HINT,
  sniffDocumentType,
  sniffImageType,
  sniffMediaType,
} from '../outbound/index.js';
import { MediaBusyError, MediaIntake } from './media-intake.js';
import type { Store } from '../store/store.js';
import type { DeviceRow } from '../devices/repository.js';
import { messagesRepository, type MessageRow } from './repository.js';
import type { StoredMedia } from './stored-media.js';
import { validateSendRequest, type MediaRequest, type ValidatedMessage } from './validate.js';
import { fileNameAfterFetch } from './media.js';
import { presentMessage, type MessageJson } from './present.js';
import { resolveQuote } from './quotes.js';
import { validateReaction, type ReactionRequest } from './reaction.js';
import { deviceGroup, isGroupJid } from '../groups/lookup.js';
import { IDEMPOTENCY_WINDOW_MS, type AcceptanceWriter, type SendAnswer } from './acceptance.js';

/** What the message service needs to know about devices and their connections. */
/** A send refused while the device reconnects after a store fault: the store's own 503, with Retry-After. */
function reconnectingAfterStoreFault(): ApiError {
  return new ApiError('STORE_UNAVAILABLE', {
    error: 'the device is reconnecting after the store was out of service; retry shortly',
    headers: { 'retry-after': String(STORE_RETRY_AFTER_S) },
  });
}

export interface SenderDirectory {
  /** The account's device with this number (not deleted), if any. */
  findByPhone(accountId: number, phone: string): Promise<DeviceRow | undefined>;
  /** Whether the device's connection is open now, here or (in a cluster) on the node holding it. */
  isConnected(device: DeviceRow): boolean;
  /** Not connected because its connection is being re-established after a store fault (see ConnectionManager). */
  isRecovering?(device: DeviceRow): boolean;
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
}

interface FetchedMedia {
  /** The download's chunks in the store (media-intake.ts). */
  readonly mediaId: string;
  readonly mimetype: string;
  /** The answer's Content-Disposition, which may name a file its URL did not. */
  readonly contentDisposition: string | null;
}

export class MessagesService {
  private readonly intake: MediaIntake;

  constructor(private readonly options: MessagesServiceOptions) {
    this.intake = new MediaIntake({
      store: options.store,
      clock: options.clock,
      dispatcher: options.mediaDispatcher,
      timeoutMs: options.mediaTimeoutMs ?? 10_000,
    });
  }

  async send(accountId: number, body: unknown, idempotencyKey: string | undefined): Promise<SendAnswer> {
    const request = validateSendRequest(body, { requireReceiver: true });
    const requestHash = idempotencyKey === undefined ? '' : hashBody(body);
    if (idempotencyKey !== undefined) {
      const replay = await this.replay(accountId, idempotencyKey, requestHash);
      if (replay !== null) return replay;
    }
    const device = await this.options.senders.findByPhone(accountId, request.device);
    if (device === undefined) throw new ApiError('DEVICE_NOT_FOUND');
    // A group's network id as the receiver (docs/internals.md, Whatspie compatibility): a group send, to a group the device is in.
    if (isGroupJid(request.receiver)) {
      const group = await deviceGroup(this.options.store.db, accountId, device.id, request.receiver);
      if (group === undefined) {
        throw new ApiError('GROUP_NOT_FOUND', { error: 'the sending device is not in a group with this id' });
      }
    }
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
    const device = await this.options.senders.findByPhone(accountId, request.device);
    if (device === undefined) throw new ApiError('DEVICE_NOT_FOUND');
    return this.acceptFrom(accountId, device, request, idempotencyKey, requestHash);
  }

  /** The part of a send after the device is known: it must be able to send now; media is fetched; then the durable accept. */
  private async acceptFrom(
    accountId: number,
    device: DeviceRow,
    request: ValidatedMessage,
    idempotencyKey: string | undefined,
    requestHash: string,
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
    const media = request.media === null ? null : await this.fetch(request.media);
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
      if (media !== null) await this.intake.discard(media.mediaId);
      throw error;
    }
    // Media of a request that became no message is not kept.
    if (media !== null && outcome.kind !== 'ok') await this.intake.discard(media.mediaId);
    if (outcome.kind === 'quota') {
      throw new ApiError('QUOTA_EXCEEDED', { error: 'this device has no messages left on its plan' });
    }
    if (outcome.kind === 'replay') return this.decodeReplay(outcome.requestHash, requestHash, outcome.response);
    this.options.onAccepted(device.id);
    return outcome.answer;
  }

  async get(accountId: number, id: string): Promise<MessageJson> {
    const row = await messagesRepository.find(this.options.store.db, accountId, id);
    if (row === undefined) throw new ApiError('MESSAGE_NOT_FOUND');
    return presentMessage(row);
  }

  async list(
    accountId: number,
    filter: { device?: string; status?: string; direction?: string; read?: boolean; limit: number; cursor?: string },
  ): Promise<{ data: MessageJson[]; next_cursor: string | null }> {
    let deviceId: number | undefined;
    if (filter.device !== undefined) {
      const device = await this.options.senders.findByPhone(accountId, filter.device);
      if (device === undefined) return { data: [], next_cursor: null };
      deviceId = device.id;
    }
    const beforeSeq = filter.cursor === undefined ? undefined : decodeCursor(filter.cursor);
    const rows = await messagesRepository.list(this.options.store.db, accountId, {
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
      data: page.map((row) => presentMessage(row)),
      next_cursor: rows.length > filter.limit && last !== undefined ? encodeCursor(last.seq) : null,
    };
  }

  private async replay(accountId: number, key: string, requestHash: string): Promise<SendAnswer | null> {
    const existing = await messagesRepository.findIdempotencyKey(this.options.store.db, accountId, key);
    if (existing === undefined || existing.created_at < this.options.clock.now() - IDEMPOTENCY_WINDOW_MS) return null;
    return this.decodeReplay(existing.request_hash, requestHash, existing.response);
  }

  private decodeReplay(storedHash: string, requestHash: string, response: string): SendAnswer {
    if (storedHash !== requestHash) {
      throw new ApiError('IDEMPOTENCY_REUSE', { error: 'this Idempotency-Key was used with a different body' });
    }
    // No answer stored with the key: its request has not finished (or was refused); ask to come back.
    if (response === '') {
      throw new ApiError('IDEMPOTENCY_IN_USE', {
        error: 'a request with this Idempotency-Key is being processed',
        headers: { 'retry-after': '1' },
      });
    }
    return JSON.parse(response) as SendAnswer;
  }

  // --- media -------------------------------------------------------------------

  private async fetch(media: MediaRequest): Promise<FetchedMedia> {
    const image = media.kind === 'image';
    let head: Uint8Array;
    let mediaId: string;
    let contentDisposition: string | null;
    try {
      ({
        mediaId,
        streamed: { head, contentDisposition },
      } = await this.intake.take(media.url, media.maxBytes));
    } catch (error) {
      if (error instanceof MediaBusyError) {
        this.options.logger?.info({ kind: media.kind, reason: 'busy' }, 'media fetch refused');
        throw new ApiError('TOO_MANY_REQUESTS', {
          error: 'too many media downloads under way; try again shortly',
          headers: { 'retry-after': '1' },
        });
      }
      if (!(error instanceof MediaFetchError)) throw error;
      this.options.logger?.info(
        {
          kind: media.kind,
          reason: error.reason,
          detail: error.detail,
          ...(error.status ? { status: error.status } : {}),
        },
        'media fetch refused',
      );
      const detail = { error: error.detail };
      switch (error.reason) {
        case 'invalid_url':
          throw new ApiError(image ? 'INVALID_IMAGE_URL' : 'INVALID_MEDIA_URL', detail);
        case 'blocked_address':
          throw new ApiError(image ? 'INVALID_IMAGE_URL' : 'INVALID_MEDIA_URL', {
            error: `${error.detail}; ${PRIVATE_DESTINATION_HINT}`,
          });
        case 'too_large':
          throw new ApiError('FILE_TOO_LARGE', { error: `larger than ${media.maxBytes / 1024 / 1024} MB` });
        default:
          throw new ApiError(image ? 'IMAGE_DOWNLOAD_FAILED' : 'MEDIA_DOWNLOAD_FAILED', detail);
      }
    }
    const sniffed = image ? sniffImageType(head) : sniffMediaType(head);
    const unsupported = (error: string): ApiError => {
      this.options.logger?.info(
        { kind: media.kind, reason: 'unsupported_format', detail: error },
        'media fetch refused',
      );
      void this.intake.discard(mediaId);
      return new ApiError('UNSUPPORTED_FORMAT', { error });
    };
    if (image && sniffed === null) throw unsupported('the image is not JPEG, PNG, GIF or WebP');
    if (media.kind === 'video' && (sniffed === null || !sniffed.startsWith('video/'))) {
      throw unsupported('the video is not a recognised video format');
    }
    if (media.kind === 'audio' && (sniffed === null || !sniffed.startsWith('audio/'))) {
      throw unsupported('the audio is not a recognised audio format');
    }
    // A document's type, unless the client gave it, is what its bytes are (docs/internals.md, Whatspie compatibility): the
    // recipient's phone picks its viewer by it.
    const mimetype = media.mimetype ?? (media.kind === 'file' ? await sniffDocumentType(head) : sniffed);
    return { mediaId, mimetype: mimetype ?? 'application/octet-stream', contentDisposition };
  }
}

/**
 * The request with its file named, for a file the client did not name and whose URL names none
 * (docs/internals.md, Whatspie compatibility): what is stored, echoed and sent carries the name.
 */
function withFileName(request: ValidatedMessage, contentDisposition: string | null): ValidatedMessage {
  const media = request.media;
  if (media === null || media.kind !== 'file' || media.fileName !== null) return request;
  const fileName = fileNameAfterFetch(media, contentDisposition);
  // The name goes right after the URL, where a given or URL-derived one is.
  const { document, ...rest } = request.params;
  return { ...request, params: { document, fileName, ...rest }, media: { ...media, fileName } };
}

/** The network content of a stored message, with its media bytes when it has some. */
export function networkContent(row: MessageRow, media: StoredMedia | undefined): NetworkMessageContent {
  // Stored params were validated at acceptance; their shape per type is the validator's.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const params = JSON.parse(row.params) as Record<string, any>;
  switch (row.type) {
    case 'chat':
      return { type: 'chat', text: String(params.text) };
    case 'image':
      return {
        type: 'image',
        media: media!.source,
        mimetype: media!.mimetype,
        caption: params.caption,
        viewOnce: params.viewOnce,
      };
    case 'video':
      return {
        type: 'video',
        media: media!.source,
        mimetype: media!.mimetype,
        caption: params.caption,
        viewOnce: params.viewOnce,
      };
    case 'audio':
      return {
        type: 'audio',
        media: media!.source,
        mimetype: media!.mimetype,
        ...(params.ptt === true ? { ptt: true } : {}),
      };
    case 'file':
      return {
        type: 'file',
        media: media!.source,
        mimetype: media!.mimetype,
        fileName: params.fileName,
        caption: params.caption,
      };
    case 'location':
      return {
        type: 'location',
        latitude: params.location.degreesLatitude,
        longitude: params.location.degreesLongitude,
        name: params.location.name,
        address: params.location.address,
      };
    case 'list':
      return {
        type: 'list',
        title: params.title,
        text: params.text,
        footer: params.footer,
        buttonText: params.buttonText,
        sections: params.sections,
      };
    case 'template':
      return { type: 'template', text: params.text, footer: params.footer, buttons: params.templateButtons };
    case 'reaction':
      // Its target was resolved and stored at acceptance, in the place a reply's quote is.
      return { type: 'reaction', emoji: String(params.emoji), target: JSON.parse(row.quoted!) as QuotedMessage };
    default:
      throw new Error(`unknown message type ${row.type}`);
  }
}

/** What goes with a stored message's content to the network: its mentions and the message it quotes. */
export function networkReplyContext(row: MessageRow): Pick<OutgoingNetworkMessage, 'mentions' | 'quoted'> {
  const params = JSON.parse(row.params) as { mentions?: unknown };
  const mentions =
    Array.isArray(params.mentions) && params.mentions.length > 0 ? (params.mentions as string[]) : undefined;
  // A reaction's stored quote is its target (networkContent), not a message it replies to.
  const quoted = row.quoted === null || row.type === 'reaction' ? undefined : (JSON.parse(row.quoted) as QuotedMessage);
  return { ...(mentions === undefined ? {} : { mentions }), ...(quoted === undefined ? {} : { quoted }) };
}

function hashBody(body: unknown): string {
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

function encodeCursor(seq: number): string {
  return Buffer.from(String(seq)).toString('base64url');
}

function decodeCursor(cursor: string): number {
  const seq = Number(Buffer.from(cursor, 'base64url').toString());
  if (!Number.isSafeInteger(seq) || seq < 1)
    throw new ApiError('VALIDATION_FAILED', { errors: { cursor: ['is not a cursor from this API'] } });
  return seq;
}
