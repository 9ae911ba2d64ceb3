/**
 * The media row written with an incoming message (in its transaction, events/incoming.ts): `pending` with the
 * network's reference when the network gave one, `failed` at once when it gave none (nothing could be fetched).
 *
 * Owns: what of the incoming content the row keeps. Must never: do I/O.
 */
import { newUlid } from '../ids.js';
import type { IncomingContent } from '../network/network.js';
import type { IncomingMediaRow } from './incoming-repository.js';

export function pendingMediaRow(
  content: IncomingContent,
  message: { readonly id: string; readonly account_id: number; readonly device_id: number | null },
  now: number,
): IncomingMediaRow | null {
  if (!('mimetype' in content) || message.device_id === null) return null;
  const media = content.media;
  return {
    media_id: newUlid(now),
    message_id: message.id,
    account_id: message.account_id,
    device_id: message.device_id,
    status: media === undefined ? 'failed' : 'pending',
    mimetype: content.mimetype,
    size: media?.size ?? null,
    file_name: 'fileName' in content ? (content.fileName ?? null) : null,
    sha256: media?.sha256 ?? null,
    attempts: 0,
    next_attempt_at: now,
    network_ref: media?.ref ?? null,
    created_at: now,
    stored_at: null,
  };
}
