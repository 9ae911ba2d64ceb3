/**
 * Received media sent on (DECISIONS 15, forward): the one place that decides whether an incoming message's media
 * can be forwarded, and that hands the send path its bytes, as a copy made inside the store (media_chunks) under a
 * new id, never fetched over HTTP from the gateway's own URL.
 *
 * Owns: the rule (only `stored` media is sent on; every other status says why not) and the copy. The copy is owned
 * by the forwarded message (message_media) from its acceptance, like media fetched from a URL, so the received
 * media's retention never cuts a queued forward short, and the forward's end never deletes the received bytes.
 * Must never: read the bytes into the gateway (the store copies them), or copy media that is not `stored`.
 */
import type { Clock } from '../clock.js';
import { ApiError } from '../errors.js';
import { newUlid } from '../ids.js';
import type { Db } from '../store/schema.js';
import { copyMedia } from './chunks.js';
import { incomingMediaRepository, type IncomingMediaRow, type IncomingMediaStatus } from './incoming-repository.js';

/** Received media that can be sent on: its id in the store and what the message showed of it. */
export interface ForwardableMedia {
  readonly mediaId: string;
  readonly mimetype: string;
  readonly size: number | null;
  readonly fileName: string | null;
}

const WHY_NOT: Record<Exclude<IncomingMediaStatus, 'stored'>, string> = {
  pending: 'its media is still being downloaded from the network; forward it once `media.status` is `stored`',
  failed: 'its media could not be downloaded from the network, so the gateway does not have it',
  too_large: 'its media was larger than GATEWAY_INCOMING_MEDIA_MAX_MB and was not kept',
  expired: 'its media expired (GATEWAY_INCOMING_MEDIA_RETENTION_DAYS) and is no longer kept',
};

/** The refusal of a forward whose media the gateway cannot send on. */
export function mediaNotForwardable(reason: string): ApiError {
  return new ApiError('MESSAGE_NOT_FORWARDABLE', { error: reason });
}

/** The media of a received row when it can be sent on; else the 400 that says why. */
export function forwardableMedia(row: IncomingMediaRow | undefined): ForwardableMedia {
  if (row === undefined) throw mediaNotForwardable('its media never reached the gateway');
  if (row.status !== 'stored') throw mediaNotForwardable(WHY_NOT[row.status]);
  return { mediaId: row.media_id, mimetype: row.mimetype, size: row.size, fileName: row.file_name };
}

/** The received message's media, read from the store, when it can be sent on; else the 400 that says why. */
export async function findForwardableMedia(db: Db, messageId: string): Promise<ForwardableMedia> {
  return forwardableMedia((await incomingMediaRepository.forMessages(db, [messageId])).get(messageId));
}

/**
 * A copy of the received media for the message that forwards it: the new media id, whose chunks the caller owns
 * (it names them in message_media when the message is accepted, or deletes them). Refused (400) when the media
 * stopped being stored since it was found.
 */
export async function copyForwardedMedia(db: Db, clock: Clock, media: ForwardableMedia): Promise<string> {
  const copy = newUlid(clock.now());
  if (!(await copyMedia(db, clock, media.mediaId, copy))) throw mediaNotForwardable(WHY_NOT.expired);
  return copy;
}
